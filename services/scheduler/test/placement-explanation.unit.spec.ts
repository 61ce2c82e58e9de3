import { PlacementExplanationSchema, type PlacedAllocation } from '@gpunet/contracts';
import { createSnapshot, gangRequest, scheduleGang, type ClusterSnapshotInput } from '@gpunet/scheduling';
import { describe, expect, it } from 'vitest';
import {
  type JobPlacementCommand,
  type JobPlacementEvent,
  jobPlacementDecider,
  type JobPlacementState,
} from '../src/domain/job-placement.decider';
import {
  explanationWrite,
  placementOutcome,
  type PlacementOutcome,
} from '../src/domain/placement-explanation';

const T0 = '2030-01-01T00:00:00.000Z';
const MEASURED = '2029-12-31T23:57:00.000Z'; // 3 min before T0
const decider = jobPlacementDecider({ maxAttempts: 2 });

/** The state after `commands`, and the last command's events. */
const run = (commands: readonly JobPlacementCommand[]) => {
  let state: JobPlacementState = decider.initialState;
  let before = state;
  let events: readonly JobPlacementEvent[] = [];
  for (const c of commands) {
    before = state;
    events = decider.decide(c, state);
    state = events.reduce(decider.evolve, state);
  }
  return { before, events, after: state, command: commands[commands.length - 1]! };
};

const allocations: PlacedAllocation[] = [
  {
    name: 'main',
    gpuCount: 1,
    nodes: [{ providerId: 'a', hostId: 'a-host', gpuUuids: ['a-gpu-0'], reservationId: 'r1-a', ranks: 1 }],
    predictedStepUs: 1000,
    pricePerHourMinor: '300',
  },
];
const queue: JobPlacementCommand = { type: 'Queue', jobId: 'job-1', tenantId: 't-1', at: T0 };
const startRound: JobPlacementCommand = {
  type: 'StartRound',
  roundId: 'r1',
  allocations,
  deadline: T0,
  holdUntil: T0,
  at: T0,
  prices: {},
  auction: null,
};
const reasons = [{ plugin: 'gang-assembly', reason: 'TooFewGpus', message: 'only 2 are free', gpus: null }];
const fail = (code: 'Unschedulable' | 'UnschedulableAndUnresolvable'): JobPlacementCommand => ({
  type: 'RecordScheduleFailure',
  code,
  allocation: 'main',
  message: '4 GPUs asked; only 2 match',
  reasons,
  at: T0,
});
const accept: JobPlacementCommand = {
  type: 'RecordAnswer',
  roundId: 'r1',
  reservationId: 'r1-a',
  outcome: 'accepted',
  reasons: [],
  at: T0,
};
const placement: PlacementOutcome = { kind: 'placement', allocations: [] as never };

describe('what each decision writes to the explanation projection', () => {
  const cases: {
    name: string;
    commands: JobPlacementCommand[];
    explanation?: PlacementOutcome;
    expected: ReturnType<typeof explanationWrite>;
  }[] = [
    {
      name: 'a round started: its explanation, reserving',
      commands: [queue, startRound],
      explanation: placement,
      expected: { kind: 'record', status: 'reserving', attempt: 1, explainedAt: T0, outcome: placement },
    },
    {
      name: 'every edge accepted: the status only',
      commands: [queue, startRound, accept],
      expected: { kind: 'status', status: 'placed' },
    },
    {
      name: 'parked for capacity: the core’s sentence and reasons',
      commands: [queue, fail('Unschedulable')],
      expected: {
        kind: 'record',
        status: 'waiting',
        attempt: 0,
        explainedAt: T0,
        outcome: {
          kind: 'failure',
          code: 'Unschedulable',
          allocation: 'main',
          message: '4 GPUs asked; only 2 match',
          reasons,
        },
      },
    },
    {
      name: 'unresolvable: declared unschedulable with its code',
      commands: [queue, fail('UnschedulableAndUnresolvable')],
      expected: {
        kind: 'record',
        status: 'unschedulable',
        attempt: 0,
        explainedAt: T0,
        outcome: {
          kind: 'failure',
          code: 'UnschedulableAndUnresolvable',
          allocation: 'main',
          message: '4 GPUs asked; only 2 match',
          reasons,
        },
      },
    },
    {
      name: 'queued: the status only (a job never tried has no row to change)',
      commands: [queue],
      expected: { kind: 'status', status: 'queued' },
    },
    { name: 'no new status, nothing explained: nothing', commands: [queue, queue], expected: null },
  ];

  it.each(cases)('$name', ({ commands, explanation, expected }) => {
    const { command, events, before, after } = run(commands);
    expect(explanationWrite(command, events, before, after, explanation)).toEqual(expected);
  });
});

describe('the core’s explanation as the projection keeps it', () => {
  const input: ClusterSnapshotInput = {
    providers: ['a', 'b'].map((p, i) => ({
      id: p,
      location: { continent: 'EU', country: 'DE', city: null, asn: null, isp: null },
      policy: {
        liveness: 'online',
        maxGpusPerJob: null,
        pricePerGpuHourMinor: {},
        defaultPricePerGpuHourMinor: 1_000 + i * 500,
        subnets: [],
      },
      hosts: [
        {
          id: `${p}-host`,
          siteId: p,
          nicBandwidthBps: 10e9,
          coordinates: null,
          intraHost: { kind: 'pcie', bandwidthBps: 2e11, latencyUs: 8 },
          gpus: [
            {
              uuid: `${p}-gpu`,
              model: 'H100-SXM',
              vendor: 'nvidia',
              vramBytes: 80e9,
              computeCapability: { major: 9, minor: 0 },
              amdArch: null,
              driverVersion: null,
              cudaVersion: '12.4',
              rocmVersion: null,
              tflops: { bf16: 900 },
              tflopsMeasured: true,
              tflopsMeasuredAt: MEASURED,
              reservedBy: null,
            },
          ],
        },
      ],
    })),
    network: {
      sites: ['a', 'b'].map((id) => ({ id, lanBandwidthBps: 10e9, lanRttUs: 100, coordinates: null })),
      hostLinks: [],
      siteLinks: [{ a: 'a', b: 'b', bandwidthBps: 5e9, rttUs: 80_200, measuredAt: MEASURED }],
      defaultWanBandwidthBps: 1e9,
      defaultWanRttUs: 30_000,
    },
  };

  it('dated figures carry their age at the decision; prices are minor-unit strings; the contract accepts it', () => {
    const r = scheduleGang(
      createSnapshot(input),
      'job-1',
      gangRequest({ gpuCount: 2, placement: 'spread' }),
      {
        seed: 1,
        explain: true,
      },
    );
    if (r.code !== 'Success') throw new Error(r.message);
    const outcome = placementOutcome(r.explanation!, T0);
    const [a] = outcome.allocations;
    expect(a!.pricePerHourMinor).toBe('2500');
    expect(a!.gpus.map((g) => g.ageMs)).toEqual([180_000, 180_000]);
    expect(a!.links[0]).toMatchObject({ rttUs: 80_200, rttSource: 'measured', ageMs: 180_000 });
    expect(() =>
      PlacementExplanationSchema.parse({
        jobId: 'job-1',
        status: 'reserving',
        attempt: 1,
        explainedAt: T0,
        outcome,
      }),
    ).not.toThrow();
  });
});
