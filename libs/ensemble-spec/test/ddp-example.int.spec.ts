import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseEnsembleSpec } from '../src';
import { expectValid } from './helpers';

/**
 * Runs docs/examples/09-cpu-gloo-ddp.yaml for real, the way a process runtime would: one process per
 * rank from the normalized spec's cmd and env, with the rendezvous environment gpunet sets, on
 * 127.0.0.1. Skipped where /usr/bin/python3 has no torch (`apt-get install python3-torch`), except
 * under CI, where that fails.
 */
const ROOT = join(import.meta.dirname, '..', '..', '..');
const PYTHON = '/usr/bin/python3';
const hasTorch =
  existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import torch'], { timeout: 60_000 }).status === 0;
// CI installs torch (scripts/ensure-services.sh): there, a missing torch is a failure, not a skip.
const ci = (process.env['CI'] ?? '') !== '' && process.env['CI'] !== 'false' && process.env['CI'] !== '0';
if (!hasTorch && ci)
  throw new Error(
    `${PYTHON} has no torch under CI: run scripts/ensure-services.sh (apt-get install python3-torch)`,
  );

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });

interface Rank {
  code: number | null;
  signal: NodeJS.Signals | null;
  lines: Record<string, unknown>[];
  stderr: string;
}

/** What a failed rank did, for the assertion's message: a silent hang says little otherwise. */
const describeRank = (rank: number, r: Rank): string =>
  `rank ${rank}: exit ${r.code} (signal ${r.signal}), ${r.lines.length} stdout lines, the last ` +
  `${JSON.stringify(r.lines.at(-1) ?? null)}; stderr: ${r.stderr.slice(-2000) || '(none)'}`;

describe.skipIf(!hasTorch)('09-cpu-gloo-ddp.yaml', () => {
  it('trains on 2 Gloo ranks and the loss falls', { timeout: 120_000 }, async () => {
    const spec = expectValid(
      parseEnsembleSpec(readFileSync(join(ROOT, 'docs/examples/09-cpu-gloo-ddp.yaml'), 'utf8')),
    );
    const a = spec.allocations[0]!;
    const [command, ...args] = a.execution.cmd as [string, ...string[]];
    const run = (port: number) =>
      Promise.all(
        Array.from(
          { length: a.ranks },
          (_, rank) =>
            new Promise<Rank>((resolve) => {
              const child = spawn(command, args, {
                cwd: ROOT,
                // Never outlive the test: a rank stuck in rendezvous is killed, and the test fails on it.
                timeout: 100_000,
                env: {
                  ...a.execution.env,
                  PATH: process.env.PATH ?? '/usr/bin:/bin',
                  RANK: String(rank),
                  LOCAL_RANK: String(rank),
                  WORLD_SIZE: String(a.ranks),
                  MASTER_ADDR: '127.0.0.1',
                  MASTER_PORT: String(port),
                  // Loopback only: Gloo otherwise picks the address the hostname resolves to, which
                  // on a host with bridges (docker0) need not be reachable.
                  GLOO_SOCKET_IFNAME: 'lo',
                  GPUNET_RENDEZVOUS_TIMEOUT_S: '60',
                },
              });
              let out = '';
              let err = '';
              child.stdout.on('data', (d: Buffer) => (out += d.toString()));
              child.stderr.on('data', (d: Buffer) => (err += d.toString()));
              child.on('close', (code, signal) =>
                resolve({
                  code,
                  signal,
                  stderr: err,
                  lines: out
                    .split('\n')
                    .filter(Boolean)
                    .map((l) => {
                      // A rank killed mid-line leaves a partial one: keep it as text.
                      try {
                        return JSON.parse(l) as Record<string, unknown>;
                      } catch {
                        return { unparsed: l };
                      }
                    }),
                }),
              );
            }),
        ),
      );
    // The spec's rendezvous_port may be busy on a shared CI host, and a free port can be taken again
    // before rank 0 binds it: pick another and retry when that is what happened.
    let ranks = await run(await freePort());
    for (
      let attempt = 1;
      attempt < 3 && ranks.some((r) => /address already in use/i.test(r.stderr));
      attempt++
    ) {
      ranks = await run(await freePort());
    }
    for (const [rank, r] of ranks.entries()) {
      expect(r.code, describeRank(rank, r)).toBe(0);
      const steps = r.lines.filter((l) => l.event === 'step');
      expect(steps).toHaveLength(30);
      expect(steps.every((s) => s.rank === rank && s.world_size === 2 && s.backend === 'gloo')).toBe(true);
      const done = r.lines.find((l) => l.event === 'done')!;
      expect(done.loss_fell).toBe(true);
      expect(done.last_loss as number).toBeLessThan((done.first_loss as number) / 2);
    }
  });
});
