import { runEdgeCli } from './app/edge-cli';

// Only boots. The edge is deliberately not a Nest service (it runs on providers' machines and stays
// lean); everything else is in app/ and testable with a fake EdgeCliIo.
const stopped = new Promise<void>((resolve) => {
  process.once('SIGTERM', () => resolve());
  process.once('SIGINT', () => resolve());
});
runEdgeCli(process.argv.slice(2), {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
  untilStopped: () => stopped,
  onReload: (fn) => process.on('SIGHUP', fn),
}).then(
  (code) => {
    process.exitCode = code;
    // Signal listeners would keep a finished command (init, status) alive.
    process.exit(code);
  },
  (e: unknown) => {
    process.stderr.write(
      `provider-edge: unexpected error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`,
    );
    process.exit(1);
  },
);
