import { mkdtemp, rm, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decideOverlay, type EdgeCliIo, ExitCode, runEdgeCli } from '../src/app/edge-cli';

const io = (env: Record<string, string> = {}): EdgeCliIo & { errors: string[] } => {
  const errors: string[] = [];
  return {
    out: () => undefined,
    err: (t) => errors.push(t),
    env,
    untilStopped: () => Promise.resolve(),
    onReload: () => undefined,
    errors,
  };
};

describe('provider-edge --overlay and --probe-ports', () => {
  it('auto mounts the overlay agent only as root with wireguard-go on PATH, and says why not', async () => {
    const bin = await mkdtemp(join(tmpdir(), 'gpunet-wg-'));
    try {
      await writeFile(join(bin, 'wireguard-go'), '#!/bin/sh\n');
      await chmod(join(bin, 'wireguard-go'), 0o755);
      expect(await decideOverlay('auto', { env: { PATH: bin } }, 0)).toMatchObject({ enabled: true });
      expect(await decideOverlay('auto', { env: { PATH: bin } }, 1000)).toEqual({
        enabled: false,
        reason: expect.stringMatching(/not running as root/),
      });
      expect(await decideOverlay('auto', { env: { PATH: join(bin, 'none') } }, 0)).toEqual({
        enabled: false,
        reason: 'wireguard-go is not on PATH',
      });
      expect(await decideOverlay('on', { env: {} }, 1000)).toMatchObject({ enabled: true });
      expect(await decideOverlay('off', { env: { PATH: bin } }, 0)).toMatchObject({ enabled: false });
    } finally {
      await rm(bin, { recursive: true, force: true });
    }
  });

  it.each([
    [['--overlay', 'maybe'], /--overlay: auto, on or off/],
    [['--overlay-netns-prefix', 'bad prefix!'], /--overlay-netns-prefix/],
    [['--probe-ports', '7946'], /--probe-ports: UDP\/TCP ports .* or off, not 7946/],
    [['--probe-ports', '0/7947'], /--probe-ports: UDP\/TCP ports/],
    [['--probe-ports', '7946/70000'], /--probe-ports: UDP\/TCP ports/],
  ])('refuses %j with a usage error naming the flag', async (args, message) => {
    const cli = io();
    expect(await runEdgeCli(['start', '--dir', join(tmpdir(), 'gpunet-none'), ...args], cli)).toBe(
      ExitCode.Usage,
    );
    expect(cli.errors.join('\n')).toMatch(message);
  });
});
