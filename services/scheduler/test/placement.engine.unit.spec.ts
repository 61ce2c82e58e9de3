import type { MessageDefinition, ReservationReply } from '@gpunet/contracts';
import { EventCollector, FakeClock, waitFor } from '@gpunet/testing';
import { describe, expect, it } from 'vitest';
import { PlacementEngine, type PlacementPorts, type ReserveRequest } from '../src/app/placement.engine';
import { candidate, edgeId, fundedJob } from './support/fixtures';

type Behaviour = 'accept' | 'decline' | 'silent';

/** Fake discovery + edges: each edge answers by its behaviour and records what it holds. */
const world = (behaviours: Record<string, Behaviour>, gpusPerEdge = 2) => {
  const holds = new Map<string, string>(); // reservationId → edge
  const reserveCalls: { edge: string; request: ReserveRequest }[] = [];
  const releases: string[] = [];
  const emitted = new EventCollector<{ type: string; data: Record<string, unknown> }>('emitted events');
  let offered = Object.keys(behaviours);
  const ports: PlacementPorts = {
    findCandidates: (_job, exclude) =>
      Promise.resolve(offered.filter((e) => !exclude.includes(e)).map((e) => candidate(e, gpusPerEdge))),
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
    release: (_edge, reservationId) => {
      releases.push(reservationId);
      holds.delete(reservationId);
      return Promise.resolve();
    },
    emit: (_jobId, def: MessageDefinition, data) => {
      emitted.push({ type: def.type, data: data as Record<string, unknown> });
      return Promise.resolve();
    },
  };
  return {
    ports,
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

const engineFor = (w: ReturnType<typeof world>, clock: FakeClock) => {
  let n = 0;
  return new PlacementEngine({
    ports: w.ports,
    clock,
    newId: () => `round-${++n}`,
    reservationDeadlineMs: 5_000,
  });
};

describe('placement engine', () => {
  it('all chosen edges accept → job.placed with the reservations', async () => {
    const clock = new FakeClock('2030-01-01T00:00:00Z');
    const w = world({ [A]: 'accept', [B]: 'accept' });
    engineFor(w, clock).submit(fundedJob({ gpus: 4 }));
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
    engine.submit(fundedJob({ gpus: 4 }));
    // Each round: wait until only the silent edge has not answered, then let its deadline pass.
    const status = () => engine.status('job-1');
    const onlySilentLeft = () => {
      const s = status();
      if (s?.status !== 'reserving' || !s.round) return s?.status === 'placed';
      const round = s.round;
      return round.targets.every((t) => round.accepted.includes(t.reservationId) || t.providerId === C);
    };
    for (let i = 0; i < 6 && status()?.status !== 'placed'; i++) {
      await waitFor(onlySilentLeft, {
        timeoutMs: 2_000,
        description: 'a round waiting only on the silent edge',
      });
      if (status()?.status === 'reserving') clock.advance(5_000);
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
    engine.submit(fundedJob({ gpus: 4 }));
    await waitFor(() => engine.status('job-1')?.status === 'waiting', { timeoutMs: 2_000 });
    expect(w.reserveCalls).toEqual([]);
    w.setOffered([A, B]);
    engine.capacityChanged();
    await w.emitted.waitFor((e) => e.type === 'job.placed', { timeoutMs: 5_000 });
  });

  it('no GPU on offer fits → job.queued with the core’s sentence, waiting for capacity', async () => {
    const clock = new FakeClock('2030-01-01T00:00:00Z');
    const w = world({ [A]: 'accept' });
    engineFor(w, clock).submit(fundedJob({ gpus: 1, gpuClasses: ['MI300X'] }));
    const e = await w.emitted.waitFor((x) => x.type === 'job.queued' && x.data.reason !== null, {
      timeoutMs: 5_000,
    });
    expect(e.data.reason).toMatch(/GPUs? asked/);
  });

  it('edges keep declining → job.unschedulable (RetriesExhausted) after maxAttempts rounds, nothing held', async () => {
    const clock = new FakeClock('2030-01-01T00:00:00Z');
    const w = world({ [A]: 'decline', [B]: 'decline', [C]: 'decline' }, 1);
    new PlacementEngine({
      ports: w.ports,
      clock,
      newId: () => `r-${w.reserveCalls.length}`,
      maxAttempts: 2,
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
    engine.submit(fundedJob({ gpus: 4 }));
    await waitFor(() => w.reserveCalls.length === 2 && w.holds.size === 1, { timeoutMs: 2_000 });
    engine.cancel('job-1');
    expect(w.holds.size).toBe(0);
    expect(engine.status('job-1')?.status).toBe('cancelled');
  });
});
