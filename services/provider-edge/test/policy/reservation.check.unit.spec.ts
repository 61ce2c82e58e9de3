import type { EdgeIsolation, EdgeReservation } from '@gpunet/contracts';
import { describe, expect, it } from 'vitest';
import { mergeInventory } from '../../src/domain/detection/inventory';
import { parseSimulatedInventory } from '../../src/domain/detection/simulated-inventory';
import { availableUntil } from '@gpunet/contracts';
import { parsePolicy } from '../../src/domain/policy/policy';
import {
  checkReservation,
  type EdgeSnapshot,
  type ReservationRequest,
} from '../../src/domain/policy/reservation.check';
import { resolveSharedGpus } from '../../src/domain/policy/shared-gpus';
import { testHost } from '../support/host';

const INVENTORY = `
gpus:
  - { model: NVIDIA H100 80GB HBM3, count: 4, vram: 80GiB, compute_capability: "9.0", interconnect: nvlink }
  - { model: NVIDIA A100 80GB PCIe, count: 2, vram: 80GiB, compute_capability: "8.0" }
  - { model: NVIDIA GeForce RTX 4090, count: 1, vram: 24GiB }
`;
const POLICY = `
version: 1
name: table
gpus: { share: [0, 1, 2, 3, 4, 6], max_per_job: 4 }
cpu: { reserve_cores: 8 }
memory: { reserve: 64GiB }
images: { allow: ["nvcr.io/nvidia/", "docker.io/pytorch/pytorch:"] }
pricing:
  asset: USDC
  floors: [{ model: H100, per_gpu_hour: "2.50" }, { model: A100, per_gpu_hour: "1.20" }]
subnets: [public, research]
availability:
  time_zone: Europe/Berlin
  windows: [{ days: [mon, tue, wed, thu, fri], from: "19:00", to: "07:00" }, { days: [sat, sun], from: "00:00", to: "24:00" }]
jobs: { max_duration: 12h }
`;

const sim = parseSimulatedInventory(INVENTORY);
const pol = parsePolicy(POLICY);
if (!sim.ok || !pol.ok) throw new Error('fixtures');
const inventory = mergeInventory([sim.value.backend]);
const policy = pol.policy;
const snapshot = (reservations: EdgeReservation[] = [], isolation?: EdgeIsolation): EdgeSnapshot => ({
  policy,
  inventory,
  host: { ...testHost({ cores: 64, memoryGiB: 512 }), ...(isolation ? { isolation } : {}) },
  sharedUuids: resolveSharedGpus(policy, inventory).uuids,
  reservations,
});

// Tuesday 2030-01-01 is a Tuesday; 22:00 in Berlin (UTC+1 in January) = 21:00Z: inside the weekday window.
const TUE_22_BERLIN = Date.parse('2030-01-01T21:00:00.000Z');
const TUE_12_BERLIN = Date.parse('2030-01-01T11:00:00.000Z');
const HOUR = 3600_000;

const request = (over: Partial<ReservationRequest> = {}): ReservationRequest => ({
  reservationId: 'r-1',
  jobId: 'job-1',
  gpuUuids: ['SIM-nvidia-0', 'SIM-nvidia-1'],
  cpuMillicores: 16_000,
  memoryBytes: 128 * 1024 ** 3,
  image: 'nvcr.io/nvidia/pytorch:24.01-py3',
  maxDurationMs: 4 * HOUR,
  subnet: 'public',
  asset: 'USDC',
  pricePerGpuHourMinor: '3000000',
  holdUntil: new Date(TUE_22_BERLIN + 60_000).toISOString(),
  minimumIsolation: 'host-process',
  ...over,
});

const held = (over: Partial<EdgeReservation>): EdgeReservation => ({
  reservationId: 'r-other',
  jobId: 'job-other',
  gpuUuids: ['SIM-nvidia-2'],
  cpuMillicores: 40_000,
  memoryBytes: 300 * 1024 ** 3,
  expiresAt: new Date(TUE_22_BERLIN + HOUR).toISOString(),
  ...over,
});

const isolated = (level: EdgeIsolation['level']): EdgeIsolation => ({
  level,
  runtime: level === 'host-process' ? 'process' : 'docker',
  ociRuntime: level === 'host-process' ? null : level === 'gvisor' ? 'runsc' : 'runc',
  userNamespaces: level === 'container-userns',
  detail: `a ${level} edge`,
});

interface Case {
  readonly name: string;
  readonly request?: Partial<ReservationRequest>;
  readonly reservations?: EdgeReservation[];
  readonly now?: number;
  /** What the edge runs ranks with; default none reported (taken as host processes). */
  readonly isolation?: EdgeIsolation;
  /** Expected decline codes with their fields, or [] for accepted. */
  readonly declined: readonly (readonly [string, string | null])[];
}

const cases: Case[] = [
  { name: 'a request within every limit is accepted', declined: [] },
  {
    name: 'an unknown GPU',
    request: { gpuUuids: ['SIM-nvidia-0', 'GPU-nope'] },
    declined: [['GPU_UNKNOWN', 'gpuUuids[1]']],
  },
  {
    name: 'a GPU the provider keeps',
    request: { gpuUuids: ['SIM-nvidia-5'] },
    declined: [['GPU_NOT_SHARED', 'gpuUuids[0]']],
  },
  {
    name: 'a GPU another job holds',
    request: { gpuUuids: ['SIM-nvidia-2'] },
    reservations: [held({ cpuMillicores: 0, memoryBytes: 0 })],
    declined: [['GPU_BUSY', 'gpuUuids[0]']],
  },
  {
    name: 'a GPU whose hold has expired is free again',
    request: { gpuUuids: ['SIM-nvidia-2'] },
    reservations: [held({ expiresAt: new Date(TUE_22_BERLIN - 1).toISOString() })],
    declined: [],
  },
  {
    name: 'more GPUs than the provider gives one job',
    request: { gpuUuids: ['SIM-nvidia-0', 'SIM-nvidia-1', 'SIM-nvidia-2', 'SIM-nvidia-3', 'SIM-nvidia-4'] },
    declined: [['TOO_MANY_GPUS', 'gpuUuids']],
  },
  {
    name: 'more CPU than shared (64 - 8 cores)',
    request: { cpuMillicores: 56_001 },
    declined: [['CPU_UNAVAILABLE', 'cpuMillicores']],
  },
  {
    name: 'CPU that other reservations already use',
    request: { cpuMillicores: 20_000 },
    reservations: [held({})],
    declined: [['CPU_UNAVAILABLE', 'cpuMillicores']],
  },
  {
    name: 'more memory than shared (512 - 64 GiB)',
    request: { memoryBytes: 449 * 1024 ** 3 },
    declined: [['MEMORY_UNAVAILABLE', 'memoryBytes']],
  },
  {
    name: 'an image outside the allowed prefixes',
    request: { image: 'docker.io/evil/miner:1' },
    declined: [['IMAGE_NOT_ALLOWED', 'image']],
  },
  {
    name: 'an image matching a tag prefix',
    request: { image: 'docker.io/pytorch/pytorch:2.3.0-cuda12.1' },
    declined: [],
  },
  { name: 'no image yet (benchmark hold)', request: { image: null }, declined: [] },
  { name: 'another asset', request: { asset: 'NTX' }, declined: [['ASSET_NOT_ACCEPTED', 'asset']] },
  {
    name: 'below the H100 floor',
    request: { pricePerGpuHourMinor: '2499999' },
    declined: [['PRICE_BELOW_FLOOR', 'pricePerGpuHourMinor']],
  },
  { name: 'exactly the floor', request: { pricePerGpuHourMinor: '2500000' }, declined: [] },
  {
    name: 'a model without a floor and no default takes any price',
    request: { gpuUuids: ['SIM-nvidia-6'], pricePerGpuHourMinor: '0' },
    declined: [],
  },
  {
    name: 'the highest floor of a mixed request applies',
    request: { gpuUuids: ['SIM-nvidia-4', 'SIM-nvidia-0'], pricePerGpuHourMinor: '2000000' },
    declined: [['PRICE_BELOW_FLOOR', 'pricePerGpuHourMinor']],
  },
  {
    name: 'a subnet the provider did not join',
    request: { subnet: 'private-lab' },
    declined: [['SUBNET_NOT_JOINED', 'subnet']],
  },
  {
    name: 'longer than the provider allows (and so past the window, too)',
    request: { maxDurationMs: 12 * HOUR + 1 },
    declined: [
      ['DURATION_TOO_LONG', 'maxDurationMs'],
      ['OUTSIDE_AVAILABILITY', 'maxDurationMs'],
    ],
  },
  {
    name: 'outside the availability windows',
    now: TUE_12_BERLIN,
    request: { holdUntil: new Date(TUE_12_BERLIN + 60_000).toISOString() },
    declined: [['OUTSIDE_AVAILABILITY', null]],
  },
  {
    name: 'running past the end of the window (07:00 Berlin)',
    request: { maxDurationMs: 10 * HOUR },
    declined: [['OUTSIDE_AVAILABILITY', 'maxDurationMs']],
  },
  {
    name: 'a hold that ended already',
    request: { holdUntil: new Date(TUE_22_BERLIN).toISOString() },
    declined: [['HOLD_EXPIRED', 'holdUntil']],
  },
  {
    name: 'the same reservation again (a retry) is accepted again',
    reservations: [
      held({
        reservationId: 'r-1',
        jobId: 'job-1',
        gpuUuids: ['SIM-nvidia-1', 'SIM-nvidia-0'],
        cpuMillicores: 16_000,
        memoryBytes: 128 * 1024 ** 3,
        expiresAt: new Date(TUE_22_BERLIN + 60_000).toISOString(),
      }),
    ],
    declined: [],
  },
  {
    name: 'the same reservation id with other terms',
    reservations: [held({ reservationId: 'r-1' })],
    declined: [['RESERVATION_CONFLICT', 'reservationId']],
  },
  {
    name: 'an edge that reports no isolation is taken as host processes',
    request: { minimumIsolation: 'container' },
    declined: [['ISOLATION_TOO_WEAK', 'minimumIsolation']],
  },
  {
    name: 'a host-process edge and a subnet that requires containers',
    isolation: isolated('host-process'),
    request: { minimumIsolation: 'container' },
    declined: [['ISOLATION_TOO_WEAK', 'minimumIsolation']],
  },
  {
    name: 'a host-process edge and a subnet that accepts host processes',
    isolation: isolated('host-process'),
    request: { minimumIsolation: 'host-process' },
    declined: [],
  },
  {
    name: 'a container-userns edge meets a container minimum',
    isolation: isolated('container-userns'),
    request: { minimumIsolation: 'container' },
    declined: [],
  },
  {
    name: 'a container edge and a subnet that requires gVisor',
    isolation: isolated('container'),
    request: { minimumIsolation: 'gvisor' },
    declined: [['ISOLATION_TOO_WEAK', 'minimumIsolation']],
  },
  {
    name: 'a gVisor edge meets every minimum',
    isolation: isolated('gvisor'),
    request: { minimumIsolation: 'gvisor' },
    declined: [],
  },
  {
    name: 'every violation is reported, not only the first',
    request: {
      gpuUuids: ['SIM-nvidia-5'],
      image: 'evil/miner',
      asset: 'NTX',
      subnet: 'x',
      maxDurationMs: 13 * HOUR,
    },
    declined: [
      ['GPU_NOT_SHARED', 'gpuUuids[0]'],
      ['IMAGE_NOT_ALLOWED', 'image'],
      ['ASSET_NOT_ACCEPTED', 'asset'],
      ['SUBNET_NOT_JOINED', 'subnet'],
      ['DURATION_TOO_LONG', 'maxDurationMs'],
      ['OUTSIDE_AVAILABILITY', 'maxDurationMs'],
    ],
  },
];

describe('checkReservation: the edge re-checks its policy on every reservation', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const decision = checkReservation(
      snapshot(c.reservations, c.isolation),
      request(c.request),
      c.now ?? TUE_22_BERLIN,
    );
    if (c.declined.length === 0) {
      expect(decision, JSON.stringify(decision)).toMatchObject({ outcome: 'accepted' });
    } else {
      expect(decision.outcome).toBe('declined');
      const reasons = decision.outcome === 'declined' ? decision.reasons : [];
      expect(reasons.map((r) => [r.code, r.field])).toEqual(c.declined);
      for (const r of reasons) expect(r.message.length).toBeGreaterThan(10);
    }
  });

  it("says the floor in the asset's units", () => {
    const d = checkReservation(snapshot(), request({ pricePerGpuHourMinor: '1000000' }), TUE_22_BERLIN);
    expect(d.outcome === 'declined' && d.reasons[0]?.message).toBe(
      'offered 1 USDC/GPU-hour; the floor for NVIDIA H100 80GB HBM3 is 2.5',
    );
  });
});

describe('checkReservation: isolation', () => {
  it('says the level the subnet requires and the level the edge runs with, and why', () => {
    const d = checkReservation(
      snapshot([], isolated('host-process')),
      request({ minimumIsolation: 'container-userns' }),
      TUE_22_BERLIN,
    );
    expect(d.outcome === 'declined' && d.reasons).toEqual([
      {
        code: 'ISOLATION_TOO_WEAK',
        field: 'minimumIsolation',
        message:
          "the job's subnet requires isolation container-userns or stronger; this edge runs ranks as host-process (a host-process edge)",
      },
    ]);
  });
});

describe('checkReservation: a gVisor edge and GPUs', () => {
  const real = { ...snapshot([], isolated('gvisor')), inventory: { ...inventory, simulated: false } };

  it('declines real GPUs on gVisor, each by its field, saying CPU jobs only', () => {
    const d = checkReservation(real, request(), TUE_22_BERLIN);
    expect(d.outcome === 'declined' && d.reasons.map((r) => [r.code, r.field])).toEqual([
      ['GPU_NOT_SHARED', 'gpuUuids[0]'],
      ['GPU_NOT_SHARED', 'gpuUuids[1]'],
    ]);
    expect(d.outcome === 'declined' && d.reasons[0]?.message).toMatch(/gVisor \(runsc\).*CPU jobs only/);
  });

  it('accepts a CPU-only reservation on gVisor, and real GPUs on runc', () => {
    expect(checkReservation(real, request({ gpuUuids: [] }), TUE_22_BERLIN).outcome).toBe('accepted');
    const runc = { ...real, host: { ...real.host, isolation: isolated('container') } };
    expect(checkReservation(runc, request(), TUE_22_BERLIN).outcome).toBe('accepted');
  });
});

describe('availableUntil', () => {
  const windows = policy.availability;
  it.each([
    ['Tuesday 22:00 Berlin → Wednesday 07:00', '2030-01-01T21:00:00.000Z', '2030-01-02T06:00:00.000Z'],
    [
      'Friday 20:00 Berlin → through the weekend to Monday 00:00',
      '2030-01-04T19:00:00.000Z',
      '2030-01-06T23:00:00.000Z',
    ],
    ['Tuesday 12:00 Berlin → not available', '2030-01-01T11:00:00.000Z', null],
    ['Wednesday 06:59:30 Berlin → 07:00', '2030-01-02T05:59:30.000Z', '2030-01-02T06:00:00.000Z'],
  ])('%s', (_name, at, until) => {
    const r = availableUntil(windows, Date.parse(at));
    expect(r === null || r === 'always' ? r : new Date(r).toISOString()).toBe(until);
  });

  it('is always available without windows, or with windows covering the week', () => {
    expect(availableUntil(null, 0)).toBe('always');
    const all = {
      timeZone: 'UTC',
      windows: [
        { days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const, from: '00:00', to: '24:00' },
      ],
    };
    expect(
      availableUntil(
        { timeZone: all.timeZone, windows: [{ ...all.windows[0]!, days: [...all.windows[0]!.days] }] },
        0,
      ),
    ).toBe('always');
  });
});
