import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

/** Runs `provider-edge <args>` with this terminal and returns its exit status. */
export type EdgeRunner = (args: readonly string[]) => Promise<number>;

const REPO = resolve(import.meta.dirname, '../../../../../..');

/**
 * The real runner. `GPUNET_EDGE_BIN` names an installed `provider-edge`; otherwise the one in this
 * repository runs under tsx with this Node. The edge is its own program (the CLI does not import
 * another service's code); signals from the terminal reach both.
 */
export const spawnEdge =
  (env: Readonly<Record<string, string | undefined>> = process.env): EdgeRunner =>
  (args) =>
    new Promise((done) => {
      const bin = env['GPUNET_EDGE_BIN'];
      const [command, commandArgs] = bin
        ? [bin, [...args]]
        : [
            process.execPath,
            ['--import', 'tsx', resolve(REPO, 'services/provider-edge/src/main.ts'), ...args],
          ];
      const child = spawn(command, commandArgs, {
        stdio: 'inherit',
        cwd: bin ? process.cwd() : REPO,
        env: { ...env },
      });
      const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
      const onTerm = forward('SIGTERM');
      const onHup = forward('SIGHUP');
      process.on('SIGTERM', onTerm);
      process.on('SIGHUP', onHup);
      // SIGINT from a terminal reaches the whole process group; the edge stops itself.
      process.on('SIGINT', () => undefined);
      const finish = (code: number) => {
        process.off('SIGTERM', onTerm);
        process.off('SIGHUP', onHup);
        done(code);
      };
      child.once('error', (e) => {
        process.stderr.write(`gpunet edge: cannot run provider-edge (${command}): ${e.message}\n`);
        finish(1);
      });
      child.once('exit', (code, signal) =>
        finish(code ?? (signal === 'SIGINT' || signal === 'SIGTERM' ? 0 : 1)),
      );
    });
