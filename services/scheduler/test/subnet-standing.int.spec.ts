import {
  type AuctionClearing,
  type Envelope,
  GetPlacementExplanation,
  type InputOf,
  JobFunded,
  type JobPlaced,
  JobSubmittedV1,
  type MessageDefinition,
  originOf,
  type PayloadOf,
  ReserveOnEdge,
  streamIdOf,
} from '@gpunet/contracts';
import type { EventingRuntime } from '@gpunet/eventing';
import type { RunningService } from '@gpunet/service-runtime';
import {
  EventCollector,
  FakeClock,
  type NatsTestContext,
  type PostgresTestSchema,
  useNats,
  usePostgres,
} from '@gpunet/testing';
import type { Msg, Subscription } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FundedJob } from '../src/domain/placement-input';
import { serveDiscoveryAndCollect } from './support/discovery-stub';
import { runScheduler } from './support/service';
import { candidate, edgeId, fundedJob, submittedV1 } from './support/fixtures';
import { publishStanding } from './support/standing';

/**
 * Settlement's word on who may run a subnet's jobs, and the subnet's auction, enforced by placement
 * on real NATS and Postgres: `subnet.member-standing-changed` published on JetStream as settlement's
 * outbox would, consumed into the scheduler's projection; discovery and the edges answered in the
 * test (each edge records the price it was asked to accept).
 */
describe('scheduler subnet standing and auctions (NATS + Postgres)', () => {
  let pg: PostgresTestSchema;
  let nats: NatsTestContext;
  let service: RunningService;
  let eventing: EventingRuntime;
  const clock = new FakeClock('2030-01-01T00:00:00.000Z');
  const events = new EventCollector<Envelope>('scheduler events');
  const subscriptions: Subscription[] = [];
  /** Edge → its GPUs' price floor (null: none); every edge offers 2 GPUs until retired. */
  const offered = new Map<string, string | null>();
  const held = new Set<string>();
  /** Edge → the prices its reservations asked it to accept. */
  const asked = new Map<string, string[]>();

  const addEdge = (id: string, floor: string | null = '2000000') => {
    offered.set(id, floor);
    subscriptions.push(
      nats.nc.subscribe(ReserveOnEdge.subject({ edgeId: id }, nats.prefix), {
        callback: (_e: unknown, msg: Msg) => {
          const { data } = msg.json<{ data: PayloadOf<typeof ReserveOnEdge> }>();
          for (const g of data.gpuUuids) held.add(g);
          asked.set(id, [...(asked.get(id) ?? []), data.pricePerGpuHourMinor]);
          msg.respond(
            JSON.stringify({ reservationId: data.reservationId, outcome: 'accepted', reasons: [] }),
          );
        },
      }),
    );
  };

  const publish = async <D extends MessageDefinition>(def: D, data: InputOf<D>, streamId: string) => {
    const envelope = eventing.envelopes.message(def, data, streamId, originOf(`test:${streamId}`));
    await eventing.nats.js.publish(def.subject(undefined, nats.prefix), JSON.stringify(envelope), {
      msgID: envelope.eventId,
    });
  };

  const submit = async (job: FundedJob) => {
    await publish(JobSubmittedV1, submittedV1(job), streamIdOf('job', job.jobId));
    await publish(JobFunded, job, streamIdOf('job', job.jobId));
  };

  const ofJob = (type: string, jobId: string, also: (e: Envelope) => boolean = () => true) =>
    events.waitFor((e) => e.type === type && (e.data as { jobId: string }).jobId === jobId && also(e), {
      timeoutMs: 15_000,
    });

  const placedOf = async (jobId: string) =>
    (await ofJob('job.placed', jobId)).data as PayloadOf<typeof JobPlaced>;

  const retire = (...ids: string[]) => {
    for (const id of ids) offered.delete(id);
  };

  beforeAll(async () => {
    pg = await usePostgres({ label: 'scheduler_standing' });
    nats = await useNats({ label: 'scheduler_standing' });
    ({ service, eventing } = await runScheduler({ pg, nats, clock }));
    subscriptions.push(
      ...serveDiscoveryAndCollect(
        nats,
        () => [...offered.keys()].map((id) => [id, 2] as const),
        (uuid) => held.has(uuid),
        events,
        (id, n) => {
          const c = candidate(id, n);
          const floor = offered.get(id) ?? null;
          return { ...c, gpus: c.gpus.map((g) => ({ ...g, priceFloorMinor: floor })) };
        },
      ),
    );
  });

  afterAll(async () => {
    for (const s of subscriptions) s.unsubscribe();
    await service?.close();
    await nats?.cleanup();
    await pg?.drop();
  });

  it('a provider without good standing in the job’s subnet is not placed; a standing-changed good makes it placeable', async () => {
    const ctx = { eventing, nats, pg };
    const [outsider, staked] = [edgeId('O'), edgeId('S')];
    addEdge(outsider);
    addEdge(staked);
    // Good elsewhere counts for nothing; in the job's subnet one is not a member, one below the minimum.
    await publishStanding(ctx, 'other', [outsider, staked]);
    await publishStanding(ctx, 'gov', [staked], {
      standing: 'below-minimum-stake',
      stake: '5',
      minStake: '10',
    });
    await submit(fundedJob({ jobId: 'job-standing', subnetId: 'gov', gpus: 2 }));
    const queued = await ofJob(
      'job.queued',
      'job-standing',
      (e) => (e.data as { reason: string | null }).reason !== null,
    );
    expect((queued.data as { reason: string }).reason).toContain(
      "not a member of subnet 'gov' in good standing",
    );
    const { explanation } = await eventing.client.ask(GetPlacementExplanation, { jobId: 'job-standing' });
    if (explanation?.outcome.kind !== 'failure') throw new Error('no failure explained');
    expect(explanation.outcome.reasons).toEqual(
      expect.arrayContaining([expect.objectContaining({ plugin: 'subnet-standing', gpus: 4 })]),
    );
    expect(
      events.items.some(
        (e) => e.type === 'job.placed' && (e.data as { jobId: string }).jobId === 'job-standing',
      ),
    ).toBe(false);

    // Settlement says the staked one topped up: the event wakes the parked job, which lands on it.
    await publishStanding(ctx, 'gov', [staked], { stake: '10', minStake: '10' });
    const placed = await placedOf('job-standing');
    expect(placed.allocations.flatMap((a) => a.nodes.map((n) => n.providerId))).toEqual([staked]);
    expect(placed.auction).toBeUndefined();
    // A fixed-price subnet: the edge is asked the subnet's price for the class, not the max price.
    expect(asked.get(staked)).toEqual(['3000000']);
    expect(asked.has(outsider)).toBe(false);
    retire(outsider, staked);
  });

  it('an auction job’s job.placed carries the highest placed bid, which every edge was asked to accept', async () => {
    const ctx = { eventing, nats, pg };
    const [cheap, dear, under] = [edgeId('C'), edgeId('D'), edgeId('U')];
    addEdge(cheap, null); // no floor: bids the reserve
    addEdge(dear, '2600000');
    addEdge(under, '1500000'); // below the reserve: not offered
    await publishStanding(ctx, 'bazaar', [cheap, dear, under]);
    const base = fundedJob({ jobId: 'job-auction', subnetId: 'bazaar', gpus: 4 });
    await submit({
      ...base,
      terms: {
        ...base.terms,
        pricing: { mode: 'auction', reservePricePerGpuHour: { 'H100-80GB': '2000000' } },
      },
    });
    const placed = await placedOf('job-auction');
    expect(placed.allocations.flatMap((a) => a.nodes.map((n) => n.providerId)).sort()).toEqual(
      [cheap, dear].sort(),
    );
    const auction = placed.auction as AuctionClearing;
    expect(auction.rule).toBe('uniform-highest-placed-bid');
    expect(auction.clearingPricePerGpuHour).toBe('2600000');
    expect(
      auction.bids.map((b) => `${b.providerId === cheap ? 'cheap' : 'dear'}:${b.pricePerGpuHour}`).sort(),
    ).toEqual(['cheap:2000000', 'cheap:2000000', 'dear:2600000', 'dear:2600000']);
    expect(asked.get(cheap)).toEqual(['2600000']);
    expect(asked.get(dear)).toEqual(['2600000']);
    expect(asked.has(under)).toBe(false);
    expect(placed.allocations[0]!.pricePerHourMinor).toBe(String(4n * 2_600_000n));
  });
});
