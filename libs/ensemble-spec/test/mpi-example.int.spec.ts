import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  PYTHON,
  cmdOf,
  commandRuns,
  events,
  gpunetRankEnv,
  loadExample,
  onFreePort,
  pythonImports,
  requireOrSkip,
  runProcess,
  runRanks,
  said,
  type ProcessResult,
} from './example-ranks';

/**
 * Runs docs/examples/13-cpu-mpi-hostfile.yaml for real under both of its launchers: gpunet's way (one
 * process per rank with the Open MPI environment and a hostfile at $GPUNET_HOSTFILE) and Debian's
 * Open MPI `mpirun` with a hostfile on this one host. Skipped where /usr/bin/python3 has no torch or
 * there is no mpirun (`apt-get install python3-torch openmpi-bin`), except under CI.
 */
const ready =
  requireOrSkip(pythonImports('torch'), `${PYTHON} with torch`, 'python3-torch') &&
  requireOrSkip(commandRuns('mpirun', '--version'), 'mpirun (Open MPI)', 'openmpi-bin');

const dir = mkdtempSync(join(tmpdir(), 'gpunet-mpi-example-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Both ranks on this host, the only one in the hostfile, as gpunet would write it. */
const hostfile = (slots: number): string => {
  const path = join(dir, `hostfile-${slots}`);
  writeFileSync(path, `127.0.0.1 slots=${slots}\n`);
  return path;
};

const expectTrained = (r: ProcessResult, rank: number, launcher: string, steps: number) => {
  const joined = events(r, 'joined', rank)[0];
  expect(joined, said(r)).toMatchObject({
    world_size: 2,
    launcher,
    hosts: ['127.0.0.1'],
    slots: 2,
    backend: 'gloo',
  });
  expect(events(r, 'allreduce', rank)[0]).toMatchObject({ sum: 3, expected: 3, ok: true });
  expect(events(r, 'step', rank)).toHaveLength(steps);
  const done = events(r, 'done', rank)[0]!;
  expect(done).toMatchObject({ launcher, loss_fell: true, allreduce_ok: true, weights_in_sync: true });
  expect(done['last_loss'] as number).toBeLessThan((done['first_loss'] as number) / 2);
};

describe.skipIf(!ready)('13-cpu-mpi-hostfile.yaml', () => {
  const a = loadExample('13-cpu-mpi-hostfile.yaml');
  const steps = Number(a.execution.cmd[a.execution.cmd.indexOf('--steps') + 1]);

  it('is an MPI gang of 2 CPU ranks', () => {
    expect(a).toMatchObject({ executor: 'process', ranks: 2, resources: { gpus: null } });
    expect(a.distributed?.framework).toBe('mpi');
  });

  it(
    'trains when gpunet launches the ranks (OMPI_* env and $GPUNET_HOSTFILE)',
    { timeout: 400_000 },
    async () => {
      const file = hostfile(a.ranks);
      const ranks = await runRanks(a, (rank, port) => ({
        ...gpunetRankEnv(a, rank, port),
        OMPI_COMM_WORLD_RANK: String(rank),
        OMPI_COMM_WORLD_SIZE: String(a.ranks),
        OMPI_COMM_WORLD_LOCAL_RANK: String(rank),
        GPUNET_HOSTFILE: file,
      }));
      for (const [rank, r] of ranks.entries()) {
        expect(r.code, said(r)).toBe(0);
        expectTrained(r, rank, 'gpunet', steps);
      }
    },
  );

  it('trains unchanged under mpirun with a hostfile', { timeout: 400_000 }, async () => {
    const file = hostfile(a.ranks);
    const { command, args } = cmdOf(a);
    // Only what mpirun itself sets: no RANK, no MASTER_*; the rendezvous is the hostfile's first host.
    const forward = { ...a.execution.env, GLOO_SOCKET_IFNAME: 'lo', GPUNET_RENDEZVOUS_TIMEOUT_S: '90' };
    const [r] = await onFreePort(async (port) => [
      await runProcess({
        command: 'mpirun',
        args: [
          '--allow-run-as-root',
          '--oversubscribe',
          ...['-np', String(a.ranks), '--hostfile', file],
          ...Object.entries(forward).flatMap(([k, v]) => ['-x', `${k}=${v}`]),
          command,
          ...args,
          ...['--hostfile', file, '--port', String(port)],
        ],
        env: {},
      }),
    ]);
    expect(r!.code, said(r!)).toBe(0);
    for (const rank of [0, 1]) expectTrained(r!, rank, 'mpirun', steps);
    expect(events(r!, 'joined', 0)[0]!['master']).toMatch(/^127\.0\.0\.1:\d+$/);
  });
});
