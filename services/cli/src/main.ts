import { runCli } from './app/cli';
import { nodeIo } from './infra/node-io';

// Only boots: everything else is in app/ and testable with a fake CliIo.
runCli(process.argv.slice(2), nodeIo()).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(
      `gpunet: unexpected error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`,
    );
    process.exitCode = 1;
  },
);
