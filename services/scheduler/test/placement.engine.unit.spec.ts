import type {
  AuctionClearing,
  CandidateProvider,
  PlacedAllocation,
  ReservationReply,
} from '@gpunet/contracts';
import { JobPlaced, JobUnschedulable } from '@gpunet/contracts';
import { parseEnsembleSpecOrThrow } from '@gpunet/ensemble-spec';
import { EventCollector, FakeClock, waitFor } from '@gpunet/testing';
import { describe, expect, it } from 'vitest';
import {
  type PlacementDecision,
  PlacementEngine,
  type PlacementPorts,
  type ReserveRequest,
  type StandingsOf,
} from '../src/app/placement.engine';
import type { JobPlacementOptions } from '../src/domain/job-placement.decider';
import { candidate, edgeId, fundedJob } from './support/fixtures';
import { memoryPlacements } from './support/memory-placements';
import { everyoneGood, memoryStandings, standingRow } from './support/standing';

type Behaviour = 'accept' | 'decline' | 'silent';

/**
 * Fake discovery + edges: each edge answers by its behaviour and records what it holds; the write
 * path in memory, its announcements collected in `emitted`.
 */
const world = (
  behaviours: Record<string, Behaviour>,
  gpusPerEdge = 2,
  make: (edge: string) => CandidateProvider = (e) => candidate(e, gpusPerEdge),
) => {
  const holds = new Map<string, string>(); // reservationId → edge
  const reserveCalls: { edge: string; request: ReserveRequest }[] = [];
  const releases: string[] = [];
  const emitted = new EventCollector<{ type: string; data: Record<string, unknown> }>('emitted events');
  let offered = Object.keys(behaviours);
  const ports: PlacementPorts = {
    findCandidates: (_job, exclude) => Promise.resolve(offered.filter((e) => !exclude.includes(e)).map(make)),
    reserve: (edge, request) => {
      reserveCalls.push({ edge, request });
      const b = behaviours[edge];
      if (b === 'silent') return new Promise<ReservationReply>(() => undefined);
      if (b === 'decline')
        return Promise.resolve({
          reservationId: request.reservationId,
          outcome: 'declined',
          reasons: [{ code: 'GPU_BUSY', message: 'held by another job', field: 'gpuUuids' }],
        });
      holds.set(request.reservationId, edge);
      return Promise.resolve({ reservationId: request.reservationId, outcome: 'accepted', reasons: [] });
    },
    release: (_edge, { reservationId }) => {
      releases.push(reservationId);
      holds.delete(reservationId);
      return Promise.resolve();
    },
  };
  return {
    ports,
    placements: (options: JobPlacementOptions = {}) =>
      memoryPlacements((a) => emitted.push({ type: a.type, data: a.data }), options),
    holds,
    reserveCalls,
    releases,
    emitted,
    setOffered: (edges: string[]) => {
      offered = edges;
    },
  };
};

const A = edgeId('A');
const B = edgeId('B');
const C = edgeId('C');
const D = edgeId('D');

const engineFor = (w: ReturnType<typeof world>, clock: FakeClock, maxWaitMs?: number) => {
  let n = 0;
  return new PlacementEngine({
    standings: everyoneGood,
    ports: w.ports,
    placements: w.placements(),
    clock,
    newId: () => `round-${++n}`,
    reservationDeadlineMs: 5_000,
    ...(maxWaitMs === undefined ? {} : { maxWaitMs }),
  });
};

/** Counts the engine's candidate queries (asked, and answered) from now on. */
const countLooks = (ports: PlacementPorts) => {
  const looks = { asked: 0, answered: 0 };
  const find = ports.findCandidates.bind(ports);
  ports.findCandidates = (query, exclude) => {
    looks.asked++;
    return find(query, exclude).finally(() => looks.answered++);
  };
  return looks;
};

const GiB = 1024 ** 3;
/** A normalized spec of GPU allocations (YAML under `allocations:`). */
const specOf = (allocations: string) =>
  parseEnsembleSpecOrThrow(`apiVersion: gpunet.io/v1
kind: Ensemble
metadata: { name: engine-test }
max_duration: 2h
allocations:
${allocations}`);
const gpuAllocation = (name: string, gpus: string, distributed = '') => `  ${name}:
    execution: { image: ghcr.io/example/train:1.0, cmd: [python, train.py] }
    resources:
      cpu: { cores: 4 }
      ram: { size: 16GiB }
      gpus: ${gpus}
${distributed}`;
const allocationsOf = (e: { data: Record<string, unknown> }) => e.data.allocations as PlacedAllocation[];

describe('placement engine', () => {
  it('all chosen edges accept → job.placed with the reservations', async () => {
    const clock = new FakeClock('2030-01-01T00:00:00Z');
    const w = world({ [A]: 'accept', [B]: 'accept' });
    void engineFor(w, clock).submit(fundedJob({ gpus: 4 }));
    const placed = await w.emitted.waitFor((e) => e.type === 'job.placed', { timeoutMs: 5_000 });
    const nodes = (
      placed.data.allocations as { nodes: { providerId: string; reservationId: string }[] }[]
    )[0]!.nodes;
    expect(nodes.map((n) => n.providerId).sort()).toEqual([A, B]);
    expect([...w.holds.keys()].sort()).toEqual(nodes.map((n) => n.reservationId).sort());
    expect(w.releases).toEqual([]);
  });

  it('one declines, one never answers → every reservation of those rounds released, placed on the others', async () => {
    const clock = new FakeClock('2030-01-01T00:00:00Z');
    const w = world({ [A]: 'accept', [B]: 'decline', [C]: 'silent', [D]: 'accept' });
    const engine = engineFor(w, clock);
    void engine.submit(fundedJob({ gpus: 4 }));
    // Each round: wait until only the silent edge has not answered, then let its deadline pass.
    const status = () => engine.status('job-1');
    const expired = new Set<string>();
    const onlySilentLeft = () => {
      const s = status();
      if (s?.status !== 'reserving' || !s.round || expired.has(s.round.roundId))
        return s?.status === 'placed';
      const round = s.round;
      return round.targets.every((t) => round.accepted.includes(t.reservationId) || t.providerId === C);
    };
    for (let i = 0; i < 6 && status()?.status !== 'placed'; i++) {
      await waitFor(onlySilentLeft, {
        timeoutMs: 2_000,
        description: 'a round waiting only on the silent edge',
      });
      const round = status()?.round;
      if (status()?.status === 'reserving' && round) {
        expired.add(round.roundId); // its deadline passes: the next round is another
        clock.advance(5_000);
      }
    }
    const placed = await w.emitted.waitFor((e) => e.type === 'job.placed', { timeoutMs: 5_000 });
    const nodes = (
      placed.data.allocations as { nodes: { providerId: string; reservationId: string }[] }[]
    )[0]!.nodes;
    expect(nodes.map((n) => n.providerId).sort()).toEqual([A, D]);
    // nothing leaks: the only holds left are the placed job's
    expect([...w.holds.keys()].sort()).toEqual(nodes.map((n) => n.reservationId).sort());
    // every reservation sent to B or C was released (idempotent on the edge)
    for (const call of w.reserveCalls.filter((c) => c.edge === B || c.edge === C))
      expect(w.releases).toContain(call.request.reservationId);
  });

  it('not enough GPUs now → parked (no polling), placed on the next capacity event', async () => {
    const clock = new FakeClock('2030-01-01T00:00:00Z');
    const w = world({ [A]: 'accept', [B]: 'accept' });
    w.setOffered([A]);
    const engine = engineFor(w, clock);
    void engine.submit(fundedJob({ gpus: 4 }));
    await waitFor(() => engine.status('job-1')?.status === 'waiting', { timeoutMs: 2_000 });
    expect(w.reserveCalls).toEqual([]);
    w.setOffered([A, B]);
    engine.capacityChanged();
    await w.emitted.waitFor((e) => e.type === 'job.placed', { timeoutMs: 5_000 });
  });

  it('every decision is told with the fields a log line needs: why it waits, who declined, who is left out', async () => {
    const clock = new FakeClock('2030-01-01T00:00:00Z');
    const w = world({ [A]: 'accept', [B]: 'decline', [C]: 'accept' });
    w.setOffered([A]);
    const decisions: PlacementDecision[] = [];
    let n = 0;
    const engine = new PlacementEngine({
      standings: everyoneGood,
      ports: w.ports,
      placements: w.placements(),
      clock,
      newId: () => `round-${++n}`,
      onDecision: (d) => decisions.push(d),
    });
    void engine.submit(fundedJob({ gpus: 4 }));
    await waitFor(() => engine.status('job-1')?.status === 'waiting', { timeoutMs: 2_000 });
    w.setOffered([A, B]);
    engine.capacityChanged();
    await waitFor(() => decisions.some((d) => d.decision === 'RoundAborted'), { timeoutMs: 2_000 });
    w.setOffered([A, B, C]);
    engine.capacityChanged();
    await w.emitted.waitFor((e) => e.type === 'job.placed', { timeoutMs: 5_000 });

    expect(decisions.every((d) => d.jobId === 'job-1')).toBe(true);
    const of = (decision: string) => decisions.filter((d) => d.decision === decision).map((d) => d.fields);
    expect(of('Queued')[0]).toEqual({ attempt: 1, reason: null });
    expect(of('ParkedForCapacity')[0]?.['reason']).toMatch(/GPU/);
    expect(of('RoundStarted')[0]).toMatchObject({ roundId: 'round-1', attempt: 1, gpus: 4 });
    expect([...(of('RoundStarted')[0]?.['providers'] as string[])].sort()).toEqual([A, B]);
    expect(of('ReservationDeclined')[0]).toMatchObject({ roundId: 'round-1', providerId: B });
    expect(of('RoundAborted')[0]).toMatchObject({ roundId: 'round-1', cause: 'declined', excluded: [B] });
    expect(of('Placed')).toEqual([{ roundId: 'round-2' }]);
  });

  /** A 4-GPU job waiting: discovery offers A's 2 GPUs only; the candidate queries counted from then on. */
  const waitingForB = async () => {
    const clock = new FakeClock('2030-01-01T00:00:00Z');
    const w = world({ [A]: 'accept', [B]: 'accept' });
    w.setOffered([A]);
    const engine = new PlacementEngine({
      standings: everyoneGood,
      ports: w.ports,
      placements: w.placements(),
      clock,
      newId: () => 'round-1',
      capacitySettleMs: 1_000,
    });
    void engine.submit(fundedJob({ gpus: 4 }));
    await waitFor(() => engine.status('job-1')?.status === 'waiting', { timeoutMs: 2_000 });
    return { clock, w, engine, looks: countLooks(w.ports) };
  };

  it('discovery still shows the GPUs taken at the capacity event → placed at the second look, capacitySettleMs later', async () => {
    const { clock, w, engine, looks } = await waitingForB();
    engine.capacityChanged(); // B's reservation went, but discovery's index has not caught up
    await waitFor(() => looks.answered === 1, { timeoutMs: 2_000, description: 'the first look answered' });
    w.setOffered([A, B]); // discovery caught up; no event says so
    clock.advance(999);
    expect(looks.asked).toBe(1);
    clock.advance(1);
    await w.emitted.waitFor((e) => e.type === 'job.placed', { timeoutMs: 5_000 });
    expect(looks.asked).toBe(2);
  });

  it('a burst of capacity events arms one second look, which does not arm another', async () => {
    const { clock, engine, looks } = await waitingForB(); // discovery never offers B
    engine.capacityChanged();
    engine.capacityChanged(); // while the first look runs: looked at again once it ends
    await waitFor(() => looks.answered === 2, { timeoutMs: 2_000, description: 'two looks answered' });
    clock.advance(1_000);
    await waitFor(() => looks.answered === 3, { timeoutMs: 2_000, description: 'the second look' });
    clock.advance(60_000);
    expect(looks.asked).toBe(3);
    expect(engine.status('job-1')?.status).toBe('waiting');
  });

  it('discovery fails to answer → tried again after a backoff (doubling), with no capacity event', async () => {
    const clock = new FakeClock('2030-01-01T00:00:00Z');
    const w = world({ [A]: 'accept', [B]: 'accept' });
    let failures = 2;
    const asked: number[] = [];
    const errors: string[] = [];
    const engine = new PlacementEngine({
      standings: everyoneGood,
      ports: {
        ...w.ports,
        findCandidates: (query, exclude) => {
          asked.push(clock.now().getTime());
          if (failures-- > 0) return Promise.reject(new Error('discovery did not answer'));
          return w.ports.findCandidates(query, exclude);
        },
      },
      placements: w.placements(),
      clock,
      newId: () => 'round-1',
      errorRetryMs: 1_000,
      onError: (e, context) => errors.push(`${context}: ${String(e)}`),
    });
    void engine.submit(fundedJob({ gpus: 4 }));
    await waitFor(() => errors.length === 1, { timeoutMs: 2_000, description: 'the first error' });
    clock.advance(999);
    await Promise.resolve();
    expect(asked).toHaveLength(1);
    clock.advance(1);
    await waitFor(() => errors.length === 2, { timeoutMs: 2_000, description: 'the second error' });
    clock.advance(1_999); // the second wait is twice the first
    await Promise.resolve();
    expect(asked).toHaveLength(2);
    clock.advance(1);
    await w.emitted.waitFor((e) => e.type === 'job.placed', { timeoutMs: 5_000 });
    const t0 = Date.parse('2030-01-01T00:00:00Z');
    expect(asked).toEqual([t0, t0 + 1_000, t0 + 3_000]);
    expect(errors).toEqual([
      'schedule job-1: Error: discovery did not answer',
      'schedule job-1: Error: discovery did not answer',
    ]);
  });

  it('no GPU on offer fits → job.queued with the core’s sentence, waiting for capacity', async () => {
    const clock = new FakeClock('2030-01-01T00:00:00Z');
    const w = world({ [A]: 'accept' });
    void engineFor(w, clock).submit(fundedJob({ gpus: 1, gpuClasses: ['MI300X'] }));
    const e = await w.emitted.waitFor((x) => x.type === 'job.queued' && x.data.reason !== null, {
      timeoutMs: 5_000,
    });
    expect(e.data.reason).toMatch(/GPUs? asked/);
  });

  it('edges keep declining → job.unschedulable (RetriesExhausted) after maxAttempts rounds, nothing held', async () => {
    const clock = new FakeClock('2030-01-01T00:00:00Z');
    const w = world({ [A]: 'decline', [B]: 'decline', [C]: 'decline' }, 1);
    void new PlacementEngine({
      standings: everyoneGood,
      ports: w.ports,
      placements: w.placements({ maxAttempts: 2 }),
      clock,
      newId: () => `r-${w.reserveCalls.length}`,
    }).submit(fundedJob({ gpus: 1 }));
    const e = await w.emitted.waitFor((x) => x.type === 'job.unschedulable', { timeoutMs: 5_000 });
    expect(e.data.code).toBe('RetriesExhausted');
    expect(w.reserveCalls).toHaveLength(2);
    expect(w.holds.size).toBe(0);
  });

  it('cancel while reserving releases what was accepted', async () => {
    const clock = new FakeClock('2030-01-01T00:00:00Z');
    const w = world({ [A]: 'accept', [C]: 'silent' });
    const engine = engineFor(w, clock);
    void engine.submit(fundedJob({ gpus: 4 }));
    await waitFor(() => w.reserveCalls.length === 2 && w.holds.size === 1, { timeoutMs: 2_000 });
    await engine.cancel('job-1');
    expect(w.holds.size).toBe(0);
    expect(engine.status('job-1')?.status).toBe('cancelled');
  });

  it('a round in flight when its placer stopped ends at its deadline on the next one, releasing everything', async () => {
    const clock = new FakeClock('2030-01-01T00:00:00Z');
    const w = world({ [A]: 'accept', [C]: 'silent' });
    const placements = w.placements(); // the job's stream, which outlives the placer
    const placer = () =>
      new PlacementEngine({
        standings: everyoneGood,
        ports: w.ports,
        placements,
        clock,
        newId: () => 'round-1',
        reservationDeadlineMs: 5_000,
      });
    const first = placer();
    void first.submit(fundedJob({ gpus: 4 }));
    await waitFor(() => first.status('job-1')?.round?.accepted.length === 1, { timeoutMs: 2_000 });
    await first.close();
    const next = placer();
    await next.submit(fundedJob({ gpus: 4 }));
    expect(next.status('job-1')?.status).toBe('reserving');
    expect(w.reserveCalls).toHaveLength(2); // the round is not asked for again
    clock.advance(5_000);
    await waitFor(() => next.status('job-1')?.status === 'waiting', { timeoutMs: 2_000 });
    expect([...w.releases].sort()).toEqual(w.reserveCalls.map((c) => c.request.reservationId).sort());
    expect(w.holds.size).toBe(0);
    expect(next.status('job-1')).toMatchObject({ attempt: 1, excluded: [C] });
  });

  it('a spec job: every node holds whole ranks and reserves ranks × CPU/memory, the image and the duration', async () => {
    const clock = new FakeClock('2030-01-01T00:00:00Z');
    const w = world({ [A]: 'accept', [B]: 'accept', [C]: 'accept' }, 3);
    const spec = specOf(
      gpuAllocation(
        'train',
        '{ count: 4, models: [H100] }',
        `    distributed: { framework: torchrun, gpus_per_rank: 2, max_nodes: 2 }`,
      ),
    );
    void engineFor(w, clock).submit(fundedJob({ gpus: 4 }), spec);
    const placed = await w.emitted.waitFor((e) => e.type === 'job.placed', { timeoutMs: 5_000 });
    const [train] = allocationsOf(placed);
    expect(train!.name).toBe('train');
    // 3 GPUs per edge, 2 per rank: each node takes one whole rank (2 GPUs), never 3.
    expect(train!.nodes.map((n) => [n.gpuUuids.length, n.ranks])).toEqual([
      [2, 1],
      [2, 1],
    ]);
    expect(w.reserveCalls).toHaveLength(2);
    for (const { request } of w.reserveCalls) {
      expect(request).toMatchObject({
        cpuMillicores: 4000,
        memoryBytes: 16 * GiB,
        image: 'ghcr.io/example/train:1.0',
        maxDurationMs: 3_600_000, // the spec's 2 h, capped at the 1 h the funded terms pay for
      });
    }
  });

  it('a provider whose CPU runs fewer ranks than it has GPUs is offered only those', async () => {
    const clock = new FakeClock('2030-01-01T00:00:00Z');
    // A: 8 GPUs but 8 cores (2 ranks of 4 cores); B: 2 GPUs with plenty of CPU.
    const w = world({ [A]: 'accept', [B]: 'accept' }, 2, (e) =>
      e === A ? { ...candidate(A, 8), cpuMillicores: 8_000 } : candidate(e, 2),
    );
    const spec = specOf(
      gpuAllocation('train', '{ count: 4 }', `    distributed: { framework: torchrun, max_nodes: 2 }`),
    );
    void engineFor(w, clock).submit(fundedJob({ gpus: 4 }), spec);
    const placed = await w.emitted.waitFor((e) => e.type === 'job.placed', { timeoutMs: 5_000 });
    const nodes = allocationsOf(placed)[0]!.nodes;
    expect(Object.fromEntries(nodes.map((n) => [n.providerId, n.ranks]))).toEqual({ [A]: 2, [B]: 2 });
    expect(w.reserveCalls.find((c) => c.edge === A)!.request.cpuMillicores).toBe(8_000);
  });

  it('an ensemble: every allocation is placed, one reservation per node', async () => {
    const clock = new FakeClock('2030-01-01T00:00:00Z');
    const w = world({ [A]: 'accept', [B]: 'accept' }, 2);
    const spec = specOf(
      `${gpuAllocation('trainer', '{ count: 2 }')}\n${gpuAllocation('evaluator', '{ count: 1 }')}`,
    );
    void engineFor(w, clock).submit(fundedJob({ gpus: 3 }), spec);
    const placed = await w.emitted.waitFor((e) => e.type === 'job.placed', { timeoutMs: 5_000 });
    const allocations = allocationsOf(placed);
    expect(allocations.map((a) => [a.name, a.gpuCount]).sort()).toEqual([
      ['evaluator', 1],
      ['trainer', 2],
    ]);
    const gpus = allocations.flatMap((a) => a.nodes.flatMap((n) => n.gpuUuids));
    expect(new Set(gpus).size).toBe(3);
    expect(w.reserveCalls).toHaveLength(allocations.flatMap((a) => a.nodes).length);
  });

  it('a spec the scheduler cannot place (CPU-only) → job.unschedulable at once, saying why', async () => {
    const clock = new FakeClock('2030-01-01T00:00:00Z');
    const w = world({ [A]: 'accept' });
    const spec = specOf(`  cpu:
    execution: { image: alpine, cmd: [sh] }
    resources: { cpu: { cores: 1 }, ram: { size: 1GiB } }`);
    void engineFor(w, clock).submit(fundedJob({ gpus: 1 }), spec);
    const e = await w.emitted.waitFor((x) => x.type === 'job.unschedulable', { timeoutMs: 5_000 });
    expect(e.data).toMatchObject({
      code: 'UnschedulableAndUnresolvable',
      allocation: 'cpu',
      reasons: [expect.objectContaining({ plugin: 'spec-plan', reason: 'CpuOnlyAllocation' })],
    });
    expect(w.reserveCalls).toEqual([]);
  });

  it('a very long sentence is cut to the contract’s bounds, not lost', async () => {
    const clock = new FakeClock('2030-01-01T00:00:00Z');
    const w = world({ [A]: 'accept' });
    const names = Array.from({ length: 40 }, (_, i) => `allocation-with-a-long-name-${i}`);
    const spec = specOf(names.map((n) => gpuAllocation(n, '{ count: 1 }')).join('\n'));
    const together = {
      ...spec,
      nodes: [{ name: 'all', allocations: names, peer: null, location: { accept: [], reject: [] } }],
    };
    void engineFor(w, clock).submit(fundedJob({ gpus: 40 }), together);
    const e = await w.emitted.waitFor((x) => x.type === 'job.unschedulable', { timeoutMs: 5_000 });
    expect(JobUnschedulable.schema.safeParse(e.data).success).toBe(true);
    expect(e.data.message).toMatch(/^node 'all' puts allocations/);
  });

  it('queued longer than the maximum wait → job.unschedulable (Unschedulable) with the last reasons', async () => {
    const clock = new FakeClock('2030-01-01T00:00:00Z');
    const w = world({ [A]: 'accept' });
    const engine = engineFor(w, clock, 60_000);
    void engine.submit(fundedJob({ gpus: 4 }));
    await waitFor(() => engine.status('job-1')?.status === 'waiting', { timeoutMs: 2_000 });
    clock.advance(59_999);
    expect(engine.status('job-1')?.status).toBe('waiting');
    clock.advance(1);
    const e = await w.emitted.waitFor((x) => x.type === 'job.unschedulable', { timeoutMs: 5_000 });
    expect(e.data.code).toBe('Unschedulable');
    expect(e.data.message).toMatch(/^queued longer than the maximum wait of 1 min; last: 4 GPUs asked/);
    expect((e.data.reasons as unknown[]).length).toBeGreaterThan(0);
    // A capacity event afterwards changes nothing: the job is out of the queue.
    engine.capacityChanged();
    expect(engine.status('job-1')?.status).toBe('unschedulable');
  });

  it('a restarted job keeps the wait it already had', async () => {
    const clock = new FakeClock('2030-01-01T01:00:00Z');
    const w = world({ [A]: 'accept' });
    const engine = engineFor(w, clock, 3_600_000);
    void engine.submit(fundedJob({ gpus: 4 }), null, { queuedSince: new Date('2030-01-01T00:30:00Z') });
    await waitFor(() => engine.status('job-1')?.status === 'waiting', { timeoutMs: 2_000 });
    clock.advance(30 * 60_000);
    await w.emitted.waitFor((x) => x.type === 'job.unschedulable', { timeoutMs: 5_000 });
  });

  it('a placed job’s GPUs are offered again only once its edge reports it no longer holds them', async () => {
    const clock = new FakeClock('2030-01-01T00:00:00Z');
    const w = world({ [A]: 'accept' }, 2);
    const engine = engineFor(w, clock);
    void engine.submit(fundedJob({ jobId: 'job-1', gpus: 2 }));
    await w.emitted.waitFor((e) => e.type === 'job.placed', { timeoutMs: 5_000 });
    // Discovery still offers A's GPUs (it has not heard of the reservation): never offered twice.
    void engine.submit(fundedJob({ jobId: 'job-2', gpus: 2 }));
    await waitFor(() => engine.status('job-2')?.status === 'waiting', { timeoutMs: 2_000 });
    const gpus = w.reserveCalls[0]!.request.gpuUuids;
    engine.reservationsChanged(A, gpus); // A still holds them
    engine.capacityChanged();
    await waitFor(() => engine.status('job-2')?.status === 'waiting', { timeoutMs: 2_000 });
    expect(w.reserveCalls).toHaveLength(1);
    engine.reservationsChanged(A, []); // job-1 ended on A
    engine.capacityChanged();
    await waitFor(() => engine.status('job-2')?.status === 'placed', { timeoutMs: 2_000 });
  });
});

describe('placement engine: the subnet’s standing and prices', () => {
  const engineWith = (w: ReturnType<typeof world>, clock: FakeClock, standings: StandingsOf) => {
    let n = 0;
    return new PlacementEngine({
      standings,
      ports: w.ports,
      placements: w.placements(),
      clock,
      newId: () => `round-${++n}`,
      reservationDeadlineMs: 5_000,
    });
  };

  it('offers only members in good standing of the job’s subnet; a member turning good is placed after the wake', async () => {
    const clock = new FakeClock('2030-01-01T00:00:00Z');
    const w = world({ [A]: 'accept', [B]: 'accept' });
    const standings = memoryStandings();
    standings.set(standingRow('public', A, 'good'));
    standings.set(standingRow('public', B, 'below-minimum-stake'));
    standings.set(standingRow('other', B, 'good')); // good elsewhere counts for nothing here
    const engine = engineWith(w, clock, standings);
    void engine.submit(fundedJob({ gpus: 4 }));
    await waitFor(() => engine.status('job-1')?.status === 'waiting', { timeoutMs: 2_000 });
    expect(w.reserveCalls).toEqual([]);
    const queued = await w.emitted.waitFor((e) => e.type === 'job.queued' && e.data.reason !== null, {
      timeoutMs: 2_000,
    });
    expect(queued.data.reason).toContain(
      "not a member of subnet 'public' in good standing (below-minimum-stake",
    );
    standings.set(standingRow('public', B, 'good', { seq: 2 }));
    engine.capacityChanged();
    const placed = await w.emitted.waitFor((e) => e.type === 'job.placed', { timeoutMs: 5_000 });
    expect(
      allocationsOf(placed)[0]!
        .nodes.map((n) => n.providerId)
        .sort(),
    ).toEqual([A, B].sort());
  });

  it('a jail that ends wakes the parked job by the clock, with no event', async () => {
    const clock = new FakeClock('2030-01-01T00:00:00Z');
    const w = world({ [A]: 'accept' });
    const standings = memoryStandings();
    standings.set(standingRow('public', A, 'jailed', { jailedUntilMs: Date.parse('2030-01-01T00:10:00Z') }));
    const engine = engineWith(w, clock, standings);
    void engine.submit(fundedJob({ gpus: 2 }));
    await waitFor(() => engine.status('job-1')?.status === 'waiting', { timeoutMs: 2_000 });
    clock.advance(9 * 60_000);
    await engine.settled();
    expect(engine.status('job-1')?.status).toBe('waiting');
    clock.advance(60_000);
    await w.emitted.waitFor((e) => e.type === 'job.placed', { timeoutMs: 5_000 });
  });

  it('a job waits for edges isolated as its subnet requires, saying why; each reserve carries the minimum', async () => {
    const clock = new FakeClock('2030-01-01T00:00:00Z');
    const w = world({ [A]: 'accept', [B]: 'accept' }, 2, (e) => ({
      ...candidate(e, 2),
      isolation: e === A ? 'host-process' : 'container',
    }));
    const base = fundedJob({ gpus: 4 });
    const job = {
      ...base,
      terms: { ...base.terms, trust: { ...base.terms.trust, minimumIsolation: 'container' as const } },
    };
    const engine = engineWith(w, clock, everyoneGood);
    void engine.submit(job);
    const queued = await w.emitted.waitFor((e) => e.type === 'job.queued' && e.data.reason !== null, {
      timeoutMs: 2_000,
    });
    expect(queued.data.reason).toContain(
      "2 by isolation (edge runs host-process; subnet 'public' requires container)",
    );
    expect(w.reserveCalls).toEqual([]);
    void engine.submit({ ...job, jobId: 'job-2', tenantId: 'tenant-b', gpus: 2 });
    const placed = await w.emitted.waitFor((e) => e.type === 'job.placed' && e.data.jobId === 'job-2', {
      timeoutMs: 5_000,
    });
    expect(allocationsOf(placed)[0]!.nodes.map((n) => n.providerId)).toEqual([B]);
    expect(w.reserveCalls.map((c) => [c.edge, c.request.minimumIsolation])).toEqual([[B, 'container']]);
  });

  it('a fixed-price job asks each edge to accept its subnet’s price for the class, not the max price', async () => {
    const clock = new FakeClock('2030-01-01T00:00:00Z');
    const w = world({ [A]: 'accept', [B]: 'accept' });
    void engineWith(w, clock, everyoneGood).submit(fundedJob({ gpus: 4 }));
    const placed = await w.emitted.waitFor((e) => e.type === 'job.placed', { timeoutMs: 5_000 });
    expect(w.reserveCalls.map((c) => c.request.pricePerGpuHourMinor)).toEqual(['3000000', '3000000']);
    expect(placed.data).not.toHaveProperty('auction');
    expect(allocationsOf(placed)[0]!.pricePerHourMinor).toBe(String(4n * 3_000_000n));
  });

  it('an auction job clears at the highest placed bid: every edge asked it, job.placed carries the bids', async () => {
    const clock = new FakeClock('2030-01-01T00:00:00Z');
    const floors: Record<string, string | null> = { [A]: '2500000', [B]: null, [C]: '1000000' };
    const w = world({ [A]: 'accept', [B]: 'accept', [C]: 'accept' }, 2, (e) => {
      const c = candidate(e, 2);
      return { ...c, gpus: c.gpus.map((g) => ({ ...g, priceFloorMinor: floors[e] ?? null })) };
    });
    const base = fundedJob({ gpus: 4 });
    const job = {
      ...base,
      terms: {
        ...base.terms,
        pricing: { mode: 'auction' as const, reservePricePerGpuHour: { 'H100-80GB': '2000000' } },
      },
    };
    void engineWith(w, clock, everyoneGood).submit(job);
    const placed = await w.emitted.waitFor((e) => e.type === 'job.placed', { timeoutMs: 5_000 });
    // C bids below the reserve: not offered. A bids its floor, B (no floor) the reserve.
    expect(
      allocationsOf(placed)[0]!
        .nodes.map((n) => n.providerId)
        .sort(),
    ).toEqual([A, B].sort());
    expect(w.reserveCalls.map((c) => c.request.pricePerGpuHourMinor)).toEqual(['2500000', '2500000']);
    const auction = placed.data.auction as AuctionClearing;
    expect(auction.rule).toBe('uniform-highest-placed-bid');
    expect(auction.clearingPricePerGpuHour).toBe('2500000');
    expect(auction.bids.map((b) => [b.providerId, b.pricePerGpuHour]).sort()).toEqual(
      [
        [A, '2500000'],
        [A, '2500000'],
        [B, '2000000'],
        [B, '2000000'],
      ].sort(),
    );
    expect(JobPlaced.schema.safeParse(placed.data).success).toBe(true);
  });
});
