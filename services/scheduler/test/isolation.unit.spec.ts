import type { CandidateProvider, IsolationLevel, SubnetTrust } from '@gpunet/contracts';
import { createSnapshot, gangRequest, schedule, SIMULATED_GPUS } from '@gpunet/scheduling';
import { describe, expect, it } from 'vitest';
import { ISOLATION, IsolationReason } from '../src/domain/isolation.filter';
import { type FundedJob, isolationView, snapshotInput, trustOf } from '../src/domain/placement-input';
import { placementRegistry } from '../src/domain/placement-registry';
import { candidatePrices } from '../src/domain/subnet-pricing';
import { candidate, edgeId, fundedJob, TEST_SUBNET_TRUST } from './support/fixtures';
import { standingRow } from './support/standing';

const [HOST, CONTAINER, USERNS, GVISOR] = ['H', 'C', 'U', 'G'].map(edgeId) as [
  string,
  string,
  string,
  string,
];
const LEVEL_OF: Record<string, IsolationLevel> = {
  [HOST]: 'host-process',
  [CONTAINER]: 'container',
  [USERNS]: 'container-userns',
  [GVISOR]: 'gvisor',
};

const jobWith = (trust: Partial<SubnetTrust>, gpus: number): FundedJob => {
  const base = fundedJob({ gpus, subnetId: 'live' });
  return { ...base, terms: { ...base.terms, trust: { ...TEST_SUBNET_TRUST, ...trust } } };
};

/** One round of the scheduler's pipeline over these candidates (two GPUs each) for `job`. */
const place = (job: FundedJob, candidates: readonly CandidateProvider[]) =>
  schedule(
    createSnapshot(snapshotInput(candidates, job.gpuClasses)),
    {
      id: job.jobId,
      allocations: [
        gangRequest({ gpuCount: job.gpus, maxNodes: job.gpus, models: ['H100 80GB'], trust: trustOf(job) }),
      ],
      edgeConstraints: [],
    },
    {
      seed: 1,
      registry: placementRegistry(new Map(), {
        standing: {
          subnetId: job.subnetId,
          standings: new Map(candidates.map((c) => [c.providerId, standingRow(job.subnetId, c.providerId)])),
          atMs: 0,
        },
        isolation: isolationView(job, candidates),
        prices: candidatePrices(job, candidates),
        pricing: 'fixed',
      }),
      explain: true,
    },
  );

const edges = (...ids: string[]): CandidateProvider[] =>
  ids.map((id) => ({ ...candidate(id, 2), isolation: LEVEL_OF[id]! }));

describe('isolation filter: a job is offered only edges at or above its subnet’s minimum isolation', () => {
  it.each([
    ['host-process: every edge', 'host-process', [HOST, CONTAINER, USERNS, GVISOR]],
    ['container: all but host processes', 'container', [CONTAINER, USERNS, GVISOR]],
    ['container-userns: user namespaces or gVisor', 'container-userns', [USERNS, GVISOR]],
    ['gvisor: gVisor only', 'gvisor', [GVISOR]],
  ] as const)('minimum %s', (_name, minimumIsolation, placeable) => {
    const all = edges(HOST, CONTAINER, USERNS, GVISOR);
    // Asking for every placeable GPU is placed on exactly those edges; one GPU more is not.
    const r = place(jobWith({ minimumIsolation }, placeable.length * 2), all);
    if (r.code !== 'Success') throw new Error(r.message);
    expect(r.placement.allocations[0]!.nodes.map((n) => n.providerId).sort()).toEqual([...placeable].sort());
    expect(place(jobWith({ minimumIsolation }, placeable.length * 2 + 1), all).code).not.toBe('Success');
  });

  it('a job only host processes could serve is not placed; the reasons name the edge’s level and the subnet’s rule', () => {
    const r = place(jobWith({ minimumIsolation: 'container' }, 2), edges(HOST));
    if (r.code === 'Success') throw new Error('placed on host processes');
    expect(r.reasons).toContainEqual({
      plugin: ISOLATION,
      reason: IsolationReason.IsolationTooWeak,
      message: "edge runs host-process; subnet 'live' requires container",
      gpus: 2,
    });
    expect(r.message).toContain("2 by isolation (edge runs host-process; subnet 'live' requires container)");
    expect(r.message).toContain('isolation container or stronger');
  });

  it('each weaker level is counted with its own reason', () => {
    const r = place(jobWith({ minimumIsolation: 'gvisor' }, 8), edges(HOST, CONTAINER, USERNS, GVISOR));
    if (r.code === 'Success') throw new Error('placed below gvisor');
    for (const level of ['host-process', 'container', 'container-userns'])
      expect(r.message).toContain(`2 by isolation (edge runs ${level}; subnet 'live' requires gvisor)`);
  });

  it('an edge discovery names no level for is taken as host processes', () => {
    const job = jobWith({ minimumIsolation: 'container' }, 2);
    const only = edges(CONTAINER);
    const r = schedule(
      createSnapshot(snapshotInput(only, job.gpuClasses)),
      {
        id: job.jobId,
        allocations: [gangRequest({ gpuCount: 2, maxNodes: 2, trust: trustOf(job) })],
        edgeConstraints: [],
      },
      {
        seed: 1,
        registry: placementRegistry(new Map(), {
          standing: {
            subnetId: 'live',
            standings: new Map([[CONTAINER, standingRow('live', CONTAINER)]]),
            atMs: 0,
          },
          isolation: { ...isolationView(job, only), levels: new Map() },
          prices: candidatePrices(job, only),
          pricing: 'fixed',
        }),
        explain: true,
      },
    );
    if (r.code === 'Success') throw new Error('placed on an edge of unknown isolation');
    expect(r.message).toContain("2 by isolation (edge runs host-process; subnet 'live' requires container)");
  });

  it('a subnet refusing both: simulated GPUs count under simulated-gpus (the filter before), real host-process ones under isolation', () => {
    const simulatedHost = edges(HOST);
    const realHost: CandidateProvider = {
      ...candidate(edgeId('R'), 2),
      simulated: false,
      isolation: 'host-process',
    };
    const job = jobWith(
      { simulatedGpus: 'refused', verifiedGpus: 'optional', minimumIsolation: 'container' },
      4,
    );
    const r = place(job, [...simulatedHost, realHost]);
    if (r.code === 'Success') throw new Error('placed');
    expect(r.reasons.map((x) => [x.plugin, x.gpus])).toEqual(
      expect.arrayContaining([
        [SIMULATED_GPUS, 2],
        [ISOLATION, 2],
      ]),
    );
  });
});
