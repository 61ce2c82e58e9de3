import { canonicalJson, FindCandidates, signingInput, EdgePolicyReported } from '@gpunet/contracts';
import { createUser } from '@nats-io/nkeys';
import { describe, expect, it } from 'vitest';
import {
  availableFor,
  candidateCriteria,
  locationAllowed,
  versionsSatisfied,
} from '../src/domain/candidate.filter';
import { gpuRows, priceFloorFor } from '../src/domain/gpu-rows';
import { edgeIdOfSubject, verifyEdgeReport } from '@gpunet/contracts';
import { configFromEnv, InvalidConfigError, missingNodeFlags } from '../src/app/discovery.config';
import { gpuRequirement } from './support/requirement';

describe('candidate criteria and checks outside SQL', () => {
  it('normalizes a spec requirement into criteria', () => {
    const request = FindCandidates.request.parse({
      gpu: gpuRequirement(
        "{ count: 4, vendor: nvidia, models: [h100, 'A100 80GB'], min_vram: 40GB, min_compute_capability: '8.0' }",
      ),
    });
    expect(candidateCriteria(request)).toMatchObject({
      vendor: 'nvidia',
      models: [' A100 80GB ', ' H100 '],
      minVramBytes: 40e9,
      minComputeCapability: 80,
      minGpusPerProvider: 1,
      includeSimulated: true,
    });
  });

  it.each([
    ['nvidia', '12.4', '>=12.1', true],
    ['nvidia', '12.0', '>=12.1', false],
    ['nvidia', null, '>=12.1', false],
    ['nvidia', '11.4', null, true],
    ['amd', null, '>=12.1', true],
  ] as const)('CUDA %s %s against %s → %s', (vendor, cuda, range, ok) => {
    expect(versionsSatisfied({ vendor, cudaVersion: cuda, rocmVersion: null }, range, null)).toBe(ok);
  });

  it('checks ROCm ranges on AMD GPUs only', () => {
    expect(
      versionsSatisfied({ vendor: 'amd', cudaVersion: null, rocmVersion: '6.1.2' }, '>=12', '>=6.0'),
    ).toBe(true);
    expect(versionsSatisfied({ vendor: 'amd', cudaVersion: null, rocmVersion: '5.7' }, null, '>=6.0')).toBe(
      false,
    );
  });

  it('honours availability windows and job length', () => {
    const nights = { timeZone: 'UTC', windows: [{ days: ['tue' as const], from: '20:00', to: '23:00' }] };
    const tue21 = Date.parse('2030-01-01T21:00:00Z');
    expect(availableFor(null, tue21, 10 ** 9)).toBe(true);
    expect(availableFor(nights, tue21, 3_600_000)).toBe(true);
    expect(availableFor(nights, tue21, 3 * 3_600_000)).toBe(false);
    expect(availableFor(nights, tue21, null)).toBe(true);
    expect(availableFor(nights, Date.parse('2030-01-01T12:00:00Z'), null)).toBe(false);
  });

  it('applies the spec location rule', () => {
    const de = { continent: 'EU', country: 'DE', city: 'Berlin' };
    const entry = (o: object) => ({ continent: null, country: null, city: null, asn: null, isp: null, ...o });
    expect(locationAllowed(null, de)).toBe(true);
    expect(locationAllowed({ accept: [entry({ continent: 'EU' })], reject: [] }, de)).toBe(true);
    expect(locationAllowed({ accept: [entry({ country: 'FR' })], reject: [] }, de)).toBe(false);
    expect(locationAllowed({ accept: [], reject: [entry({ city: 'berlin' })] }, de)).toBe(false);
    expect(locationAllowed({ accept: [entry({ asn: 3320 })], reject: [] }, de)).toBe(false);
  });
});

describe('GPU rows of the projection', () => {
  const inventory = {
    simulated: false,
    backends: [],
    gpus: [0, 1, 2].map((index) => ({
      index,
      uuid: `GPU-${index}`,
      vendor: 'nvidia' as const,
      model: index === 2 ? 'NVIDIA A100-SXM4-80GB' : 'NVIDIA H100 80GB HBM3',
      vramBytes: 1,
      driverVersion: null,
      cudaVersion: null,
      computeCapability: { major: 9, minor: 0 },
      rocmVersion: null,
      architecture: null,
      pciBusId: null,
      mig: { enabled: index === 1, devices: [] },
    })),
    links: [{ vendor: 'nvidia' as const, a: 0, b: 2, kind: 'nvlink' as const, lanes: 12 }],
  };
  const policy = {
    sharedGpuUuids: ['GPU-0', 'GPU-1', 'GPU-2'],
    maxGpusPerJob: 8,
    maxJobDurationMs: null,
    cpuMillicores: 1,
    memoryBytes: 1,
    images: ['*'],
    pricing: {
      asset: 'USDC',
      defaultFloorMinor: '100',
      floors: [{ model: 'H100', perGpuHourMinor: '2500000' }],
    },
    subnets: ['public'],
    availability: null,
    location: { continent: null, country: null, city: null },
  };

  it('offers shared, whole, unreserved GPUs of online providers, with floors and peers', () => {
    const reservation = {
      reservationId: 'r',
      jobId: 'j',
      gpuUuids: ['GPU-2'],
      cpuMillicores: 0,
      memoryBytes: 0,
      expiresAt: '2030-01-01T00:00:00.000Z',
    };
    const rows = gpuRows(inventory, policy, [reservation], true);
    expect(
      rows.map((r) => [r.uuid, r.available, r.reservedBy, r.priceFloorMinor, r.directPeers, r.modelWords]),
    ).toEqual([
      ['GPU-0', true, null, '2500000', [2], ' NVIDIA H100 80GB HBM3 '],
      ['GPU-1', false, null, '2500000', [], ' NVIDIA H100 80GB HBM3 '],
      ['GPU-2', false, 'r', '100', [0], ' NVIDIA A100 SXM4 80GB '],
    ]);
    expect(gpuRows(inventory, policy, [], false).some((r) => r.available)).toBe(false);
    expect(priceFloorFor(policy, 'Tesla T4')).toBe('100');
  });
});

describe('signed edge reports', () => {
  const kp = createUser();
  const id = kp.getPublicKey();
  const sign = (data: Record<string, unknown>) =>
    Buffer.from(kp.sign(new TextEncoder().encode(signingInput(EdgePolicyReported, data)))).toString(
      'base64url',
    );
  const data = {
    edgeId: id,
    publicKey: id,
    sequence: 7,
    signedAt: '2030-01-01T00:00:00.000Z',
    policy: { a: 1 },
  };

  it('accepts a report signed by the key its subject and edge id name', () => {
    expect(verifyEdgeReport(EdgePolicyReported, id, { ...data, signature: sign(data) })).toBeNull();
  });

  it.each([
    ['another subject', `U${'C'.repeat(55)}`, {}, 'subject-mismatch'],
    ['a payload changed after signing', undefined, { sequence: 8 }, 'bad-signature'],
    ['another key', undefined, { publicKey: createUser().getPublicKey() }, 'key-mismatch'],
    ['a garbage signature', undefined, { signature: 'A'.repeat(86) }, 'bad-signature'],
  ] as const)('refuses %s', (_name, subjectId, change, reason) => {
    const signed = { ...data, signature: sign(data), ...change };
    expect(verifyEdgeReport(EdgePolicyReported, subjectId ?? id, signed)).toBe(reason);
  });

  it('signs the canonical encoding, whatever the key order', () => {
    expect(canonicalJson({ b: 1, a: [{ d: null, c: 'x' }] })).toBe('{"a":[{"c":"x","d":null}],"b":1}');
  });

  it('reads the edge id from a subject, with or without a namespace', () => {
    expect(edgeIdOfSubject(`edge.${id}.registered.v1`, '')).toBe(id);
    expect(edgeIdOfSubject(`t_x.edge.${id}.registered.v1`, 't_x')).toBe(id);
    expect(edgeIdOfSubject(`edge.${id}.registered.v1`, 't_x')).toBeUndefined();
    expect(edgeIdOfSubject('edge.a.b.c.d', '')).toBeUndefined();
  });
});

describe('configFromEnv', () => {
  it('reads durations and defaults', () => {
    expect(configFromEnv({ DATABASE_URL: 'postgres://x/db', LIVENESS_WINDOW: '45s' })).toMatchObject({
      schema: 'discovery',
      livenessWindowMs: 45_000,
      sweepIntervalMs: 5_000,
      natsSeed: null,
    });
  });

  it('names every bad variable', () => {
    try {
      configFromEnv({ DATABASE_URL: 'mysql://x', LIVENESS_WINDOW: 'soon', NATS_URL: 'http://x' });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(InvalidConfigError);
      expect((e as InvalidConfigError).issues.map((i) => i.path).sort()).toEqual([
        'DATABASE_URL',
        'LIVENESS_WINDOW',
        'NATS_URL',
      ]);
    }
  });
});

describe('missingNodeFlags', () => {
  it.each([
    ['neither command line nor NODE_OPTIONS', [], undefined, ['--max-semi-space-size=1']],
    ['on the command line', ['--import', 'tsx', '--max-semi-space-size=1'], undefined, []],
    ['in NODE_OPTIONS, with another value', [], '--enable-source-maps --max-semi-space-size=2', []],
    ['a look-alike flag', ['--max-semi-space-size-x=1'], '', ['--max-semi-space-size=1']],
  ])('%s', (_name, execArgv, nodeOptions, missing) => {
    expect(missingNodeFlags(execArgv, nodeOptions)).toEqual(missing);
  });
});
