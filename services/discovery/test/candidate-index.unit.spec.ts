import { FindCandidates, GetProvider } from '@gpunet/contracts';
import { seededRandom } from '@gpunet/testing';
import { describe, expect, it } from 'vitest';
import { CandidateIndex } from '../src/domain/candidate-index';
import { gpu, provider } from './support/index-rows';
import { gpuRequirement } from './support/requirement';

const request = (gpus: string, over: Record<string, unknown> = {}) =>
  FindCandidates.request.parse({ gpu: gpuRequirement(gpus), ...over });

const ids = (index: CandidateIndex, r: ReturnType<typeof request>, bytes = 1 << 20) =>
  index.query(r, Date.parse('2030-01-01T12:00:00Z'), bytes).items.map((i) => i.providerId);

describe('CandidateIndex', () => {
  const index = new CandidateIndex();
  index.replaceAll([
    provider('p1'),
    provider('p2', { status: 'offline' }),
    provider('p3', { gpus: [gpu(0, { available: false }), gpu(1)] }),
    provider('p4', {
      subnets: ['public', 'research'],
      images: ['nvcr.io/nvidia/'],
      maxJobDurationMs: 3_600_000,
    }),
    provider('p5', {
      gpus: [
        gpu(0, {
          vendor: 'amd',
          model: 'AMD Instinct MI250X',
          modelWords: ' AMD INSTINCT MI250X ',
          cc: null,
          computeCapability: null,
          cudaVersion: null,
          rocmVersion: '6.1.2',
          architecture: 'gfx90a',
        }),
      ],
    }),
    provider('p6', {
      simulated: true,
      asset: 'NTX',
      location: { continent: 'NA', country: 'US', city: null },
    }),
  ]);

  it.each([
    [
      'any GPU: every online provider with an offered GPU',
      '{ count: 1 }',
      {},
      ['p1', 'p3', 'p4', 'p5', 'p6'],
    ],
    ['4 GPUs on one host: p3 offers one', '{ count: 4 }', { minGpusPerProvider: 4 }, ['p1', 'p4', 'p6']],
    ['by model words', "{ count: 1, models: ['A100 SXM4'] }", {}, ['p1', 'p3', 'p4', 'p6']],
    [
      'AMD by architecture',
      "{ count: 1, vendor: amd, amd_architectures: [gfx90a], rocm: '>=6' }",
      {},
      ['p5'],
    ],
    ['CUDA range excludes AMD-free hosts only for NVIDIA', "{ count: 1, cuda: '>=12.4' }", {}, ['p5']],
    [
      'subnet, image and duration',
      '{ count: 1 }',
      { subnet: 'research', image: 'nvcr.io/nvidia/pytorch:24', maxDurationMs: 3_600_000 },
      ['p4'],
    ],
    ['an image the prefixes refuse', '{ count: 1 }', { image: 'docker.io/x/y' }, ['p1', 'p3', 'p5', 'p6']],
    ['price in an asset', '{ count: 1 }', { maxPrice: { asset: 'USDC', perGpuHourMinor: '999999' } }, []],
    [
      'price at the floor',
      '{ count: 1 }',
      { maxPrice: { asset: 'USDC', perGpuHourMinor: '1000000' } },
      ['p1', 'p3', 'p4', 'p5'],
    ],
    [
      'no simulated providers, no excluded ones',
      '{ count: 1 }',
      { includeSimulated: false, excludeProviders: [] },
      ['p1', 'p3', 'p4', 'p5'],
    ],
    [
      'location',
      '{ count: 1 }',
      {
        location: {
          accept: [{ continent: 'NA', country: null, city: null, asn: null, isp: null }],
          reject: [],
        },
      },
      ['p6'],
    ],
  ])('%s', (_name, gpus, over, expected) => {
    expect(ids(index, request(gpus, over))).toEqual(expected);
  });

  it('pages by provider id, by count and by reply size', () => {
    const first = index.query(request('{ count: 1 }', { limit: 2 }), 0, 1 << 20);
    expect(first.items.map((i) => i.providerId)).toEqual(['p1', 'p3']);
    expect(first.nextCursor).toBe('p3');
    const second = index.query(request('{ count: 1 }', { limit: 2, cursor: first.nextCursor }), 0, 1 << 20);
    expect(second.items.map((i) => i.providerId)).toEqual(['p4', 'p5']);
    const last = index.query(request('{ count: 1 }', { limit: 2, cursor: second.nextCursor }), 0, 1 << 20);
    expect(last).toMatchObject({ items: [{ providerId: 'p6' }], nextCursor: null });
    const small = index.query(request('{ count: 1 }'), 0, 1_000);
    expect(small.items).toHaveLength(1);
    expect(small.nextCursor).toBe('p2'); // p2 (offline) was examined; p3 did not fit
  });

  it.each([
    ['a whole page', '{ count: 1 }', {}, 1 << 20],
    ['some GPUs of each provider', '{ count: 1, vendor: amd }', {}, 1 << 20],
    ['a page cut by count', '{ count: 1 }', { limit: 2, cursor: 'p1' }, 1 << 20],
    ['a page cut by size', '{ count: 1 }', {}, 3_000],
    ['an empty page', '{ count: 1 }', { cursor: 'p9' }, 1 << 20],
  ])('queryJson is JSON.stringify of query, byte for byte: %s', (_name, gpus, over, bytes) => {
    const r = request(gpus, over);
    const at = Date.parse('2030-01-01T12:00:00Z');
    expect(new TextDecoder().decode(index.queryJson(r, at, bytes))).toBe(
      JSON.stringify(index.query(r, at, bytes)),
    );
    // Into a reused buffer, as discovery's replies are: every byte is written, none left as it was.
    const dirty = (length: number) => new Uint8Array(length).fill(0xff);
    expect(new TextDecoder().decode(index.queryJson(r, at, bytes, dirty))).toBe(
      JSON.stringify(index.query(r, at, bytes)),
    );
  });

  it('queryJson writes into the buffer it is given and counts multi-byte characters', () => {
    const h100 = { model: 'NVIDIA H100 80GB HBM3', modelWords: ' NVIDIA H100 80GB HBM3 ' };
    const i = new CandidateIndex();
    i.replaceAll([
      provider('a', { name: 'Zürich — 東京', location: { continent: 'EU', country: 'CH', city: 'Zürich' } }),
      provider('b'),
      provider('c', {
        gpus: [gpu(0, { available: false }), gpu(1), gpu(2, h100), gpu(3), gpu(4), gpu(5, h100), gpu(6)],
      }),
    ]);
    // The A100s of c lie apart: its page entry is copied run by run.
    const a100 = request("{ count: 1, models: ['A100'] }", { cursor: 'b' });
    expect(new TextDecoder().decode(i.queryJson(a100, 0, 1 << 20))).toBe(
      JSON.stringify(i.query(a100, 0, 1 << 20)),
    );
    expect(i.query(a100, 0, 1 << 20).items[0]?.gpus.map((g) => g.index)).toEqual([1, 3, 4, 6]);
    const r = request('{ count: 1 }');
    let given: Uint8Array | undefined;
    const json = i.queryJson(r, 0, 1 << 20, (length) => {
      given = new Uint8Array(length + 2).subarray(1, length + 1);
      return given;
    });
    expect(json).toBe(given);
    const expected = JSON.stringify(i.query(r, 0, 1 << 20));
    expect(new TextDecoder().decode(json)).toBe(expected);
    expect(json.length).toBe(new TextEncoder().encode(expected).length);
    // The size limit counts bytes, not characters: b fits exactly, and one byte less leaves it out.
    const [aBytes, bBytes] = i
      .query(r, 0, 1 << 20)
      .items.map((item) => new TextEncoder().encode(JSON.stringify(item)).length);
    const fits = 256 + aBytes! + 1 + bBytes!;
    expect(i.query(r, 0, fits).items.map((p) => p.providerId)).toEqual(['a', 'b']);
    expect(i.query(r, 0, fits - 1)).toMatchObject({ items: [{ providerId: 'a' }], nextCursor: 'a' });
  });

  it('matches models and vendors by what each provider offers, however its row came in', () => {
    const h100 = { model: 'NVIDIA H100 80GB HBM3', modelWords: ' NVIDIA H100 80GB HBM3 ' };
    const i = new CandidateIndex();
    i.replaceAll([provider('a'), provider('b'), provider('c', { gpus: [gpu(0, h100), gpu(1)] })]);
    expect(i.upsert(provider('d', { version: 2, gpus: [gpu(0, h100)] }))).toBe(true);
    expect(ids(i, request("{ count: 1, models: ['H100'] }"))).toEqual(['c', 'd']);
    expect(ids(i, request("{ count: 1, models: ['A100'] }"))).toEqual(['a', 'b', 'c']);
    // Offered GPUs only: c's H100 taken, a now an H100 host.
    i.replaceAll([
      provider('a', { version: 2, gpus: [gpu(0, h100)] }),
      provider('b'),
      provider('c', { version: 2, gpus: [gpu(0, { ...h100, available: false }), gpu(1)] }),
      provider('d', { version: 2, gpus: [gpu(0, h100)] }),
    ]);
    expect(ids(i, request("{ count: 1, models: ['H100'] }"))).toEqual(['a', 'd']);
    expect(ids(i, request("{ count: 1, models: ['H100', 'A100 SXM4'] }"))).toEqual(['a', 'b', 'c', 'd']);
    expect(ids(i, request('{ count: 1, vendor: amd }'))).toEqual([]);
  });

  it('never lets an older read replace a newer row', () => {
    const i = new CandidateIndex();
    expect(i.upsert(provider('a', { version: 3 }))).toBe(true);
    expect(i.upsert(provider('a', { version: 2, status: 'offline' }))).toBe(false);
    i.replaceAll([provider('a', { version: 1, status: 'offline' }), provider('b')]);
    expect(i.get('a')?.version).toBe(3);
    expect(ids(i, request('{ count: 1 }'))).toEqual(['a', 'b']);
    // A newer row replaces the old one where it stands; a new provider goes in id order.
    expect(i.upsert(provider('a', { version: 4, status: 'offline' }))).toBe(true);
    expect(i.upsert(provider('ab'))).toBe(true);
    expect(i.size).toBe(3);
    expect(ids(i, request('{ count: 1 }'))).toEqual(['ab', 'b']);
    expect(i.upsert(provider('a', { version: 5, gpus: [gpu(0, { available: false })] }))).toBe(true);
    expect(ids(i, request('{ count: 1 }'))).toEqual(['ab', 'b']);
    expect(i.upsert(provider('a', { version: 6 }))).toBe(true);
    expect(ids(i, request('{ count: 1 }'))).toEqual(['a', 'ab', 'b']);
  });

  it('views one provider with all its GPUs, offline or reserved, and none once deregistered', () => {
    const i = new CandidateIndex();
    const edge = 'U'.padEnd(56, 'C');
    i.upsert(
      provider(edge, { status: 'offline', simulated: true, gpus: [gpu(0), gpu(1, { available: false })] }),
    );
    const view = i.view(edge);
    expect(view).toMatchObject({ providerId: edge, status: 'offline', simulated: true });
    expect(view?.gpus.map((g) => [g.uuid, g.available])).toEqual([
      ['GPU-0', true],
      ['GPU-1', false],
    ]);
    // Not a candidate (offline), still a provider; within the response contract.
    expect(ids(i, request('{ count: 1 }'))).toEqual([]);
    expect(GetProvider.response.parse({ provider: view })).toEqual({ provider: view });
    expect(i.view('U'.padEnd(56, 'D'))).toBeNull();
    i.upsert(provider(edge, { version: 2, status: 'deregistered' }));
    expect(i.view(edge)).toBeNull();
  });

  it('carries each edge’s isolation: the level in candidates (objects and bytes alike), the level and its detail in the view', () => {
    const i = new CandidateIndex();
    const hostProcess = 'U'.padEnd(56, 'H');
    const gvisor = 'U'.padEnd(56, 'G');
    i.replaceAll([
      provider(hostProcess, {
        isolation: 'host-process',
        isolationDetail: 'the edge reported no isolation (an older edge): taken as host processes',
      }),
      provider(gvisor, { isolation: 'gvisor', isolationDetail: 'Docker 26.1.5 with runsc (gVisor)' }),
    ]);
    const r = request('{ count: 1 }');
    const page = i.query(r, 0, 1 << 20);
    expect(page.items.map((c) => [c.providerId, c.isolation])).toEqual([
      [gvisor, 'gvisor'],
      [hostProcess, 'host-process'],
    ]);
    // A candidate carries the level only (the contract's shape); the bytes sent say the same.
    expect(page.items.every((c) => !('isolationDetail' in c))).toBe(true);
    expect(JSON.parse(new TextDecoder().decode(i.queryJson(r, 0, 1 << 20)))).toEqual(page);
    expect(i.view(hostProcess)).toMatchObject({
      isolation: 'host-process',
      isolationDetail: 'the edge reported no isolation (an older edge): taken as host processes',
    });
    expect(i.view(gvisor)).toMatchObject({
      isolation: 'gvisor',
      isolationDetail: 'Docker 26.1.5 with runsc (gVisor)',
    });
  });

  it('answers within the FindCandidates response contract (discovery sends its pages unchecked)', () => {
    const random = seededRandom('candidate-index-contract');
    const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
    const edgeId = () => `U${Array.from({ length: 55 }, () => random.pick([...B32])).join('')}`;
    const amd = { vendor: 'amd' as const, model: 'AMD Instinct MI300X', modelWords: ' AMD INSTINCT MI300X ' };
    const varied = new CandidateIndex();
    varied.replaceAll(
      Array.from({ length: 200 }, () =>
        provider(edgeId(), {
          status: random.pick(['online', 'online', 'offline'] as const),
          simulated: random.next() < 0.3,
          isolation: random.pick(['host-process', 'container', 'container-userns', 'gvisor'] as const),
          location: random.pick([
            { continent: 'EU', country: 'DE', city: 'Berlin' },
            { continent: null, country: null, city: null },
          ]),
          subnets: random.pick([['public'], ['public', 'research'], []]),
          maxJobDurationMs: random.pick([null, 3_600_000]),
          gpus: Array.from({ length: random.int(1, 8) }, (_, i) =>
            random.next() < 0.25
              ? gpu(i, {
                  ...amd,
                  cc: null,
                  computeCapability: null,
                  cudaVersion: null,
                  rocmVersion: '6.1.2',
                  architecture: 'gfx942',
                  priceFloorMinor: null,
                  floor: null,
                })
              : gpu(i, {
                  available: random.next() < 0.9,
                  pciBusId: random.pick([null, `00000000:${(16 + i).toString(16)}:00.0`]),
                  directPeers: random.pick([[], [0, 1, 2].filter((p) => p !== i)]),
                }),
          ),
        }),
      ),
    );
    for (const [gpus, over] of [
      ['{ count: 1 }', {}],
      ['{ count: 2 }', { minGpusPerProvider: 2, limit: 50 }],
      ["{ count: 1, vendor: amd, rocm: '>=6' }", { includeSimulated: false }],
      ["{ count: 1, models: ['A100'] }", { maxPrice: { asset: 'USDC', perGpuHourMinor: '2000000' } }],
    ] as const) {
      const page = varied.query(request(gpus, over), Date.parse('2030-01-01T12:00:00Z'), 1 << 20);
      expect(page.items.length).toBeGreaterThan(0);
      expect(FindCandidates.response.safeParse(page).error).toBeUndefined();
    }
  });
});
