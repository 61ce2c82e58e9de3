import { describe, expect, it } from 'vitest';
import {
  PYTHON,
  events,
  gpunetRankEnv,
  loadExample,
  pythonImports,
  requireOrSkip,
  runRanks,
  said,
} from './example-ranks';

/**
 * Runs docs/examples/14-cpu-grpc-parameter-server.yaml for real: rank 0 of grpc_ps.py serves the
 * weights over gRPC on MASTER_PORT, ranks 1 and 2 pull them, push gradients of their shards, and the
 * loss falls. Skipped where /usr/bin/python3 lacks torch or grpc (`apt-get install python3-torch
 * python3-grpcio`), except under CI.
 */
const ready = requireOrSkip(
  pythonImports('torch', 'grpc'),
  `${PYTHON} with torch and grpc`,
  'python3-torch python3-grpcio',
);

describe.skipIf(!ready)('14-cpu-grpc-parameter-server.yaml', () => {
  it('trains through a gRPC parameter server and 2 workers', { timeout: 400_000 }, async () => {
    const a = loadExample('14-cpu-grpc-parameter-server.yaml');
    expect(a).toMatchObject({ executor: 'process', ranks: 3, resources: { gpus: null } });
    expect(a.distributed?.framework).toBe('custom');
    const steps = Number(a.execution.cmd[a.execution.cmd.indexOf('--steps') + 1]);

    const [server, ...workers] = await runRanks(a, (rank, port) => gpunetRankEnv(a, rank, port));

    expect(server!.code, said(server!)).toBe(0);
    expect(events(server!, 'serving', 0)[0]).toMatchObject({ workers: 2 });
    // Every push of every worker became one update of the weights.
    const updates = events(server!, 'update', 0);
    expect(updates).toHaveLength(2 * steps);
    expect(updates.map((u) => u['version'])).toEqual(Array.from({ length: 2 * steps }, (_, i) => i + 1));
    expect(new Set(updates.map((u) => u['worker']))).toEqual(new Set([1, 2]));
    const done = events(server!, 'done', 0)[0]!;
    expect(done).toMatchObject({ role: 'server', updates: 2 * steps, loss_fell: true });

    for (const [i, w] of workers.entries()) {
      const rank = i + 1;
      expect(w.code, said(w)).toBe(0);
      expect(events(w, 'connected', rank)[0]!['server']).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(events(w, 'step', rank)).toHaveLength(steps);
      const end = events(w, 'done', rank)[0]!;
      expect(end).toMatchObject({ role: 'worker', loss_fell: true });
      expect(end['last_loss'] as number).toBeLessThan((end['first_loss'] as number) / 2);
    }
  });
});
