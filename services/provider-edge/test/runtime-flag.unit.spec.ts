import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type EdgeCliIo, ExitCode, runEdgeCli } from '../src/app/edge-cli';

const io = (): EdgeCliIo & { errors: string[]; output: string[] } => {
  const errors: string[] = [];
  const output: string[] = [];
  return {
    out: (t) => output.push(t),
    err: (t) => errors.push(t),
    env: {},
    untilStopped: () => Promise.resolve(),
    onReload: () => undefined,
    errors,
    output,
  };
};

/* The checks run before the edge reads its directory: a missing one is never reached. */
const start = (args: readonly string[], cli: EdgeCliIo) =>
  runEdgeCli(['start', '--dir', join(tmpdir(), 'gpunet-none'), ...args], cli);

describe('provider-edge start --runtime', () => {
  it('refuses --runtime process without --unsafe-allow-host-processes, naming the flag', async () => {
    const cli = io();
    expect(await start(['--runtime', 'process'], cli)).toBe(ExitCode.Usage);
    expect(cli.errors.join('')).toContain(
      'provider-edge: --runtime process runs jobs as plain processes of this host, with no sandbox: add --unsafe-allow-host-processes to allow it',
    );
  });

  it('goes past the runtime check with the flag, and with docker or none without it', async () => {
    // The identity is the next thing read: failing on it (exit 1) means the flags were accepted.
    for (const args of [
      ['--runtime', 'process', '--unsafe-allow-host-processes'],
      ['--runtime', 'docker'],
      ['--runtime', 'none'],
      [],
    ]) {
      const cli = io();
      expect(await start(args, cli), JSON.stringify(args)).toBe(ExitCode.Failed);
      expect(cli.errors.join('')).toContain('edge.nk');
    }
  });

  it('refuses --unsafe-allow-host-processes with any runtime but process, which it would not change', async () => {
    for (const args of [['--runtime', 'docker'], ['--runtime', 'none'], []]) {
      const cli = io();
      expect(await start([...args, '--unsafe-allow-host-processes'], cli), JSON.stringify(args)).toBe(
        ExitCode.Usage,
      );
      expect(cli.errors.join('')).toContain('--unsafe-allow-host-processes: allows only --runtime process');
    }
  });

  it('names the runtimes, docker first, for an unknown one', async () => {
    const cli = io();
    expect(await start(['--runtime', 'chroot'], cli)).toBe(ExitCode.Usage);
    expect(cli.errors.join('')).toContain('--runtime: docker, process or none, not chroot');
  });

  it('says in its help that docker is the default and process needs the unsafe flag', async () => {
    const cli = io();
    expect(await runEdgeCli(['--help'], cli)).toBe(ExitCode.Ok);
    const help = cli.output.join('');
    expect(help).toContain('docker (sandboxed containers — the default)');
    expect(help).toMatch(/--unsafe-allow-host-processes\n\s+allow --runtime process/);
  });
});
