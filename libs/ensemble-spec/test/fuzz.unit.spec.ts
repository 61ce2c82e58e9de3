import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { parse, stringify } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import {
  NormalizedSpecSchema,
  parseEnsembleSpec,
  type ParseResult,
  serializeEnsembleSpec,
  SPEC_ERROR_CODES,
} from '../src';
import type { Loose } from './helpers';

/**
 * Property tests over ≥ 10,000 random and mutated specs:
 * - no exception ever escapes, and no error is INTERNAL (a bug caught by the safety net);
 * - every rejection has a path, a reason and a known code (and a position unless it is about the
 *   whole document);
 * - every accepted spec round-trips: normalize → serialize (YAML and JSON) → parse → the same
 *   normalized form, which also satisfies NormalizedSpecSchema.
 * The seed is fixed so a failure reproduces; set FUZZ_SEED to explore other inputs.
 */
const seed = Number(process.env.FUZZ_SEED ?? 20261129);
const tally = { runs: 0, accepted: 0, rejected: 0 };

const EXAMPLES = join(import.meta.dirname, '..', '..', '..', 'docs', 'examples');
const exampleSources = readdirSync(EXAMPLES)
  .filter((f) => f.endsWith('.yaml'))
  .sort()
  .map((f) => readFileSync(join(EXAMPLES, f), 'utf8'));
const exampleObjects = exampleSources.map((s) => parse(s) as Loose);

const checkResult = (r: ParseResult): boolean => {
  tally.runs += 1;
  if (!r.ok) {
    tally.rejected += 1;
    expect(r.errors.length).toBeGreaterThan(0);
    for (const e of r.errors) {
      expect(e.code).not.toBe('INTERNAL');
      expect(SPEC_ERROR_CODES).toContain(e.code);
      expect(typeof e.path).toBe('string');
      expect(e.message.trim().length).toBeGreaterThan(3);
      // Only document-level problems lack a field path; those about a field always have a position.
      if (e.path !== '') expect(e.line).toBeGreaterThan(0);
      else
        expect([
          'SYNTAX',
          'DOCUMENT_TOO_LARGE',
          'TOO_DEEP',
          'ALIAS_LIMIT',
          'MULTIPLE_DOCUMENTS',
          'MISSING_FIELD',
          'INVALID_TYPE',
          'TOO_MANY_ERRORS',
        ]).toContain(e.code);
    }
    return true;
  }
  tally.accepted += 1;
  expect(NormalizedSpecSchema.safeParse(r.spec).success).toBe(true);
  for (const format of ['yaml', 'json'] as const) {
    const again = parseEnsembleSpec(serializeEnsembleSpec(r.spec, format), { format });
    if (!again.ok)
      expect.fail(
        `canonical ${format} does not parse: ${JSON.stringify(again.errors)}\n${serializeEnsembleSpec(r.spec, format)}`,
      );
    expect(again.spec).toEqual(r.spec);
  }
  return true;
};

const check = (source: string, format?: 'yaml' | 'json'): boolean => {
  let r: ParseResult;
  try {
    r = parseEnsembleSpec(source, format ? { format } : {});
  } catch (e) {
    expect.fail(`parseEnsembleSpec threw: ${String(e)}`);
  }
  return checkResult(r);
};

// ---------------------------------------------------------------------------------------------------
// Generators of plausible specs (most valid, many subtly not).

const name = fc.constantFrom('trainer', 'ps', 'web', 'a', 'gang-1', 'x9');
const size = fc
  .tuple(
    fc.integer({ min: 0, max: 2048 }),
    fc.constantFrom('B', 'kB', 'MB', 'GB', 'TB', 'KiB', 'MiB', 'GiB', 'TiB'),
    fc.boolean(),
  )
  .map(([n, u, half]) => `${n}${half ? '.5' : ''}${u}`);
const duration = fc
  .tuple(fc.integer({ min: 0, max: 400 }), fc.constantFrom('d', 'h', 'm', 's', 'ms', 'us'))
  .map(([n, u]) => `${n}${u}`);
const bandwidth = fc
  .tuple(fc.integer({ min: 0, max: 400 }), fc.constantFrom('bps', 'kbps', 'Mbps', 'Gbps', 'Tbps'))
  .map(([n, u]) => `${n}${u}`);
const range = fc.constantFrom('>=11.8', '>=12.2', '12.x', '>=12.1 <13', '^6.0', '~6.1.2', '*', '>=13 <12');
const opt = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(a, { nil: undefined, freq: 2 });

const clean = (o: Loose): Loose => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

const gpus = fc
  .record({
    count: fc.integer({ min: 1, max: 64 }),
    vendor: opt(fc.constantFrom('nvidia', 'amd', 'any')),
    models: opt(fc.subarray(['A100', 'H100', 'RTX 4090', 'MI300X', 'l4'])),
    min_vram: opt(size),
    min_compute_capability: opt(fc.constantFrom('7.5', '8.0', '9.0', 8.6, 9)),
    amd_architectures: opt(fc.subarray(['gfx90a', 'gfx942', 'gfx1100'])),
    cuda: opt(range),
    rocm: opt(range),
    min_tflops: opt(
      fc.dictionary(
        fc.constantFrom('fp16', 'bf16', 'fp32', 'int8'),
        fc.double({ min: 0.5, max: 2000, noNaN: true }),
      ),
    ),
    mixed_models: opt(fc.boolean()),
  })
  .map(clean);

const perNode = fc
  .record({ min: opt(fc.integer({ min: 1, max: 16 })), max: opt(fc.integer({ min: 1, max: 16 })) })
  .map(clean);

const distributed = fc
  .record({
    framework: fc.constantFrom('torchrun', 'horovod', 'mpi', 'nccl', 'custom'),
    ranks: opt(fc.integer({ min: 1, max: 32 })),
    gpus_per_rank: opt(fc.constantFrom(1, 2, 4)),
    gpus_per_node: opt(perNode),
    max_nodes: opt(fc.integer({ min: 1, max: 16 })),
    placement: opt(fc.constantFrom('pack', 'spread', 'any')),
    interconnect: opt(
      fc
        .record({ min_bandwidth: opt(bandwidth), max_rtt: opt(duration), same_site: opt(fc.boolean()) })
        .map(clean),
    ),
    rendezvous_port: opt(fc.integer({ min: 1000, max: 65535 })),
  })
  .map(clean);

const failureRecovery = fc
  .record({
    strategy: opt(fc.constantFrom('stay_down', 'restart_all', 'restart_failed')),
    max_restarts: opt(fc.integer({ min: 0, max: 5 })),
    replace_failed_node: opt(fc.boolean()),
    elastic: opt(
      fc
        .record({ min_nodes: fc.integer({ min: 1, max: 4 }), max_nodes: opt(fc.integer({ min: 1, max: 8 })) })
        .map(clean),
    ),
    checkpoint_env: opt(fc.constantFrom('CKPT', 'CHECKPOINT_DIR', 'RANK')),
  })
  .map(clean);

const locationMatch = fc
  .record({
    continent: opt(fc.constantFrom('EU', 'na', 'Europe', 'Asia')),
    country: opt(fc.constantFrom('DE', 'us', 'NL')),
    asn: opt(fc.constantFrom(64512, 'AS13335')),
    city: opt(fc.constantFrom('Berlin', 'Paris')),
  })
  .map(clean);

const allocation = fc
  .record({
    type: opt(fc.constantFrom('task', 'service')),
    executor: opt(fc.constantFrom('docker', 'process')),
    execution: fc
      .record({
        image: opt(fc.constantFrom('img:1', 'nvcr.io/nvidia/pytorch:24.05-py3')),
        cmd: opt(fc.array(fc.string({ maxLength: 12 }), { maxLength: 4 })),
        env: opt(
          fc.dictionary(fc.constantFrom('A', 'HF_HOME', 'STEPS', 'LR'), fc.string({ maxLength: 8 }), {
            maxKeys: 3,
          }),
        ),
        working_dir: opt(fc.constantFrom('/workspace', 'rel')),
      })
      .map(clean),
    resources: fc
      .record({
        cpu: fc.record({ cores: fc.constantFrom(0.5, 1, 2, 8, 0.25) }),
        ram: fc.record({ size }),
        disk: opt(fc.record({ size })),
        gpus: opt(gpus),
      })
      .map(clean),
    distributed: opt(distributed),
    failure_recovery: opt(failureRecovery),
    max_duration: opt(duration),
    dns_name: opt(name),
    ports: opt(
      fc.array(
        fc
          .record({
            private: fc.integer({ min: 1, max: 65535 }),
            public: opt(fc.integer({ min: 1025, max: 65535 })),
            protocol: opt(fc.constantFrom('tcp', 'udp')),
          })
          .map(clean),
        { maxLength: 3 },
      ),
    ),
    location: opt(
      fc
        .record({
          accept: opt(fc.array(locationMatch, { maxLength: 2 })),
          reject: opt(fc.array(locationMatch, { maxLength: 2 })),
        })
        .map(clean),
    ),
  })
  .map(clean);

const spec: fc.Arbitrary<Loose> = fc
  .record({
    apiVersion: fc.constant('gpunet.io/v1'),
    kind: fc.constant('Ensemble'),
    metadata: fc
      .record({
        name,
        labels: opt(
          fc.dictionary(fc.constantFrom('team', 'gpunet.io/x'), fc.string({ maxLength: 6 }), { maxKeys: 2 }),
        ),
      })
      .map(clean),
    max_duration: duration,
    subnet: opt(fc.constantFrom('eu-research', 'lab')),
    budget: opt(
      fc
        .record({
          asset: fc.constantFrom('USDC', 'USD', 'FOO'),
          decimals: opt(fc.integer({ min: 0, max: 18 })),
          max_price_per_gpu_hour: fc.oneof(
            fc.constantFrom('2.50', '0', '1.123456', '3'),
            fc.integer({ min: 0, max: 100 }),
          ),
          max_total: opt(fc.constantFrom('100', '0.5', '999999999999999999999')),
        })
        .map(clean),
    ),
    allocations: fc.dictionary(name, allocation, { minKeys: 1, maxKeys: 3 }),
    nodes: opt(
      fc.dictionary(
        fc.constantFrom('n0', 'n1', 'web'),
        fc.record({ allocations: fc.subarray(['trainer', 'ps', 'web', 'a'], { minLength: 1 }) }),
        { maxKeys: 2 },
      ),
    ),
    edge_constraints: opt(
      fc.array(
        fc
          .record({
            between: fc.tuple(fc.constantFrom('trainer', 'ps', 'n0'), fc.constantFrom('web', 'a', 'n1')),
            max_rtt: opt(duration),
            min_bandwidth: opt(bandwidth),
          })
          .map(clean),
        {
          maxLength: 2,
        },
      ),
    ),
  })
  .map(clean);

// Specs valid by construction: consistent shapes, vendors, ports and references. They exercise
// the round trip over every field, since most of them must be accepted.

const exactSize = fc.oneof(
  fc
    .tuple(fc.integer({ min: 1, max: 2048 }), fc.constantFrom('MB', 'GB', 'MiB', 'GiB'))
    .map(([n, u]) => `${n}${u}`),
  fc.integer({ min: 1, max: 8 }).map((n) => `${n}TB`),
);
const positiveDuration = fc
  .tuple(fc.integer({ min: 1, max: 300 }), fc.constantFrom('h', 'm', 's', 'd'))
  .map(([n, u]) => `${n}${u}`);
const rtt = fc
  .tuple(fc.integer({ min: 1, max: 999 }), fc.constantFrom('us', 'ms'))
  .map(([n, u]) => `${n}${u}`);
const positiveBandwidth = fc
  .tuple(fc.integer({ min: 1, max: 400 }), fc.constantFrom('Mbps', 'Gbps'), fc.boolean())
  .map(([n, u, half]) => `${n}${half ? '.5' : ''}${u}`);

const validGpus = fc.constantFrom('nvidia', 'amd', 'any').chain((vendor) =>
  fc
    .record({
      vendor: fc.constant(vendor),
      models: opt(
        fc.subarray(vendor === 'amd' ? ['MI250', 'MI300X'] : ['A100', 'H100', 'RTX 4090', 'l4 '], {
          minLength: 1,
        }),
      ),
      min_vram: opt(exactSize),
      min_compute_capability:
        vendor === 'amd' ? fc.constant(undefined) : opt(fc.constantFrom('7.5', '8.0', '9.0', 8.6, 9)),
      amd_architectures:
        vendor === 'nvidia'
          ? fc.constant(undefined)
          : opt(fc.subarray(['gfx90a', 'gfx942'], { minLength: 1 })),
      cuda:
        vendor === 'amd'
          ? fc.constant(undefined)
          : opt(fc.constantFrom('>=11.8', '>=12.2', '12.x', '>=12.1 <13')),
      rocm: vendor === 'nvidia' ? fc.constant(undefined) : opt(fc.constantFrom('>=6.0', '6.x', '~6.1.2')),
      min_tflops: opt(
        fc.dictionary(
          fc.constantFrom('fp16', 'bf16', 'fp32', 'fp64', 'int8'),
          fc.double({ min: 0.5, max: 2000, noNaN: true }),
          {
            minKeys: 1,
          },
        ),
      ),
      mixed_models: opt(fc.boolean()),
    })
    .map(clean),
);

/** A gang shape that fits: ranks × gpus per rank GPUs, per-node max × max_nodes ≥ ranks. */
const validAllocation = fc
  .record({
    withGpus: fc.boolean(),
    ranks: fc.integer({ min: 1, max: 16 }),
    gpusPerRank: fc.constantFrom(1, 1, 2, 4),
    perNodeMax: fc.integer({ min: 1, max: 8 }),
    extraNodes: fc.integer({ min: 0, max: 3 }),
    distributed: fc.boolean(),
    framework: fc.constantFrom('torchrun', 'horovod', 'mpi', 'custom'),
    placement: opt(fc.constantFrom('pack', 'any', 'spread')),
    interconnect: opt(
      fc
        .record({ min_bandwidth: opt(positiveBandwidth), max_rtt: opt(rtt), same_site: opt(fc.boolean()) })
        .map(clean),
    ),
    explicitPerNode: fc.boolean(),
    recovery: fc.constantFrom('none', 'stay_down', 'restart_all'),
    replace: fc.boolean(),
    type: opt(fc.constantFrom('task', 'service')),
    process: fc.boolean(),
    gpus: validGpus,
    cores: fc.constantFrom(0.5, 1, 2, 8, 0.125),
    ram: exactSize,
    env: opt(
      fc.dictionary(fc.constantFrom('A', 'HF_HOME', 'STEPS', 'LR'), fc.string({ maxLength: 8 }), {
        maxKeys: 3,
      }),
    ),
    cmd: fc.array(fc.string({ maxLength: 12 }), { minLength: 1, maxLength: 4 }),
    privatePort: opt(fc.integer({ min: 1, max: 20_000 })),
    location: opt(
      fc
        .record({
          accept: opt(
            fc.array(
              // asn and isp are refused NOT_SUPPORTED until a provider reports them.
              locationMatch
                .map(({ asn: _asn, ...m }: Record<string, unknown>) => m)
                .filter((m) => Object.keys(m).length > 0),
              { maxLength: 2 },
            ),
          ),
        })
        .map(clean),
    ),
  })
  .map((g): Loose => {
    const gang = g.distributed || g.ranks > 1;
    const ranks = gang ? g.ranks : 1;
    const perNodeMax = Math.min(g.perNodeMax, ranks);
    const minNodes = Math.ceil(ranks / perNodeMax);
    const maxNodes = Math.min(ranks, minNodes + g.extraNodes);
    const effectiveMaxNodes = g.explicitPerNode ? maxNodes : ranks;
    const placement = g.placement === 'spread' && effectiveMaxNodes === 1 ? 'pack' : g.placement;
    const a: Loose = {
      type: g.type,
      executor: g.process ? 'process' : undefined,
      execution: clean({ image: g.process ? undefined : 'img:1', cmd: g.cmd, env: g.env }),
      resources: clean({
        cpu: { cores: g.cores },
        ram: { size: g.ram },
        gpus: g.withGpus ? { ...g.gpus, count: ranks * g.gpusPerRank } : undefined,
      }),
      location: g.location,
    };
    if (gang) {
      a.distributed = clean({
        framework: g.framework,
        ranks: g.withGpus ? undefined : ranks,
        gpus_per_rank: g.withGpus ? g.gpusPerRank : undefined,
        gpus_per_node: g.withGpus && g.explicitPerNode ? { max: perNodeMax * g.gpusPerRank } : undefined,
        ranks_per_node: !g.withGpus && g.explicitPerNode ? { max: perNodeMax } : undefined,
        max_nodes: g.explicitPerNode ? maxNodes : undefined,
        placement,
        interconnect: g.interconnect,
        rendezvous_port: g.privatePort === 29500 ? 29501 : undefined,
      });
    }
    if (g.privatePort !== undefined) a.ports = [{ private: g.privatePort }];
    // replace_failed_node: true, elastic and checkpoint_env are refused NOT_SUPPORTED until the
    // platform honours them (rules and fields tests): a valid spec has none of them.
    const restart = g.recovery === 'restart_all';
    if (g.recovery !== 'none') {
      a.failure_recovery = clean({
        strategy: restart ? 'restart_all' : 'stay_down',
        replace_failed_node: restart && g.replace ? false : undefined,
      });
    }
    return clean(a);
  });

const validSpec: fc.Arbitrary<Loose> = fc
  .record({
    name,
    duration: positiveDuration,
    labels: opt(
      fc.dictionary(fc.constantFrom('team', 'gpunet.io/x'), fc.string({ maxLength: 6 }), { maxKeys: 2 }),
    ),
    subnet: opt(fc.constantFrom('eu-research', 'lab')),
    budget: opt(
      fc
        .record({
          asset: fc.constantFrom('USDC', 'USD'),
          max_price_per_gpu_hour: fc.constantFrom('2.50', '0', '1.25', '3', 7),
          max_total: opt(fc.constantFrom('100', '0.5', '999999999999999999999')),
        })
        .map(clean),
    ),
    allocations: fc.uniqueArray(
      fc.tuple(fc.constantFrom('trainer', 'ps', 'web', 'gang-1'), validAllocation),
      {
        minLength: 1,
        maxLength: 3,
        selector: ([n]) => n,
      },
    ),
    edge: opt(fc.record({ max_rtt: opt(rtt), min_bandwidth: positiveBandwidth }).map(clean)),
  })
  .map((g): Loose => {
    const allocations = Object.fromEntries(g.allocations);
    const names = Object.keys(allocations);
    return clean({
      apiVersion: 'gpunet.io/v1',
      kind: 'Ensemble',
      metadata: clean({ name: g.name, labels: g.labels }),
      max_duration: g.duration,
      subnet: g.subnet,
      budget: g.budget,
      allocations,
      edge_constraints:
        g.edge && names.length > 1 ? [{ between: [names[0], names[1]], ...g.edge }] : undefined,
    });
  });

// ---------------------------------------------------------------------------------------------------
// Mutations of valid specs.

type Path = (string | number)[];
const pathsOf = (v: unknown, at: Path = [], out: Path[] = []): Path[] => {
  out.push(at);
  if (Array.isArray(v)) v.forEach((x, i) => pathsOf(x, [...at, i], out));
  else if (v !== null && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) pathsOf(x, [...at, k], out);
  return out;
};
const parentOf = (root: Loose, path: Path): Loose | undefined =>
  path
    .slice(0, -1)
    .reduce<Loose | undefined>(
      (o, k) => (o === undefined ? undefined : (o[k as string] as Loose | undefined)),
      root,
    );

const typo = (s: string, i: number): string =>
  s.length < 2 ? `${s}x` : `${s.slice(0, i % s.length)}${s.slice((i % s.length) + 1)}`;

const mutation = fc.record({
  example: fc.nat(),
  at: fc.nat(),
  op: fc.constantFrom('delete', 'replace', 'rename', 'wrap', 'stringify'),
  value: fc.oneof(
    fc.jsonValue({ maxDepth: 2 }),
    size,
    duration,
    fc.constantFrom('', 'NVIDIA', '4090', -1, 0, 1e21, 4097, true, null),
  ),
});

const mutate = (base: Loose, m: { at: number; op: string; value: unknown }): Loose => {
  const root = structuredClone(base);
  const paths = pathsOf(root).filter((p) => p.length > 0);
  const path = paths[m.at % paths.length]!;
  const parent = parentOf(root, path);
  const key = path[path.length - 1]!;
  if (parent === undefined || parent === null || typeof parent !== 'object') return root;
  switch (m.op) {
    case 'delete':
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete parent[key as string];
      break;
    case 'replace':
      parent[key as string] = m.value;
      break;
    case 'rename':
      if (!Array.isArray(parent) && typeof key === 'string') {
        parent[typo(key, m.at)] = parent[key];
        delete parent[key];
      }
      break;
    case 'wrap':
      parent[key as string] = [parent[key as string]];
      break;
    default:
      parent[key as string] = JSON.stringify(parent[key as string]);
  }
  return root;
};

const textEdit = fc.array(
  fc.record({
    at: fc.nat(),
    op: fc.constantFrom('insert', 'delete', 'replace'),
    text: fc.constantFrom(
      ':',
      '-',
      ' ',
      '\n',
      '  ',
      '[',
      '{',
      '&a',
      '*a',
      '"',
      "'",
      '#',
      '!!str',
      'x',
      '\t',
      '---',
      '|',
    ),
  }),
  { minLength: 1, maxLength: 4 },
);
const applyEdits = (source: string, edits: { at: number; op: string; text: string }[]): string =>
  edits.reduce((s, e) => {
    const i = e.at % (s.length + 1);
    if (e.op === 'insert') return s.slice(0, i) + e.text + s.slice(i);
    if (e.op === 'delete') return s.slice(0, i) + s.slice(i + e.text.length);
    return s.slice(0, i) + e.text + s.slice(i + e.text.length);
  }, source);

// ---------------------------------------------------------------------------------------------------

describe('fuzz: parse → validate → normalize → serialize → parse', () => {
  const opts = (numRuns: number) => ({ numRuns, seed, endOnFailure: true });

  it('specs valid by construction are accepted and round-trip', { timeout: 120_000 }, () => {
    const before = tally.accepted;
    fc.assert(
      fc.property(validSpec, (s) => check(stringify(s))),
      opts(3000),
    );
    // Most must be accepted, or the round-trip property would say little.
    expect(tally.accepted - before).toBeGreaterThan(2400);
  });

  it(
    'wild generated specs: whatever is accepted round-trips, the rest is explained',
    { timeout: 120_000 },
    () => {
      fc.assert(
        fc.property(spec, (s) => check(stringify(s))),
        opts(1500),
      );
    },
  );

  it('mutated examples (structure)', { timeout: 120_000 }, () => {
    fc.assert(
      fc.property(mutation, (m) =>
        check(stringify(mutate(exampleObjects[m.example % exampleObjects.length]!, m))),
      ),
      opts(3000),
    );
  });

  it('mutated generated specs (structure)', { timeout: 120_000 }, () => {
    fc.assert(
      fc.property(validSpec, mutation, (s, m) => check(stringify(mutate(s, m)))),
      opts(1000),
    );
  });

  it('mutated examples (text)', { timeout: 120_000 }, () => {
    fc.assert(
      fc.property(fc.nat(), textEdit, (i, edits) =>
        check(applyEdits(exampleSources[i % exampleSources.length]!, edits)),
      ),
      opts(1500),
    );
  });

  it('arbitrary text and JSON values', { timeout: 120_000 }, () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (s) => check(s)),
      opts(300),
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 100 }), (s) => check(s)),
      opts(200),
    );
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (v) => check(JSON.stringify(v), 'json')),
      opts(300),
    );
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (v) => check(stringify(v))),
      opts(200),
    );
  });

  afterAll(() => {
    // ≥ 10,000 specs in all (printed so CI logs show the count).
    console.log(
      `fuzz: ${tally.runs} specs, ${tally.accepted} accepted and round-tripped, ${tally.rejected} rejected (seed ${seed})`,
    );
    expect(tally.runs).toBeGreaterThanOrEqual(10_000);
  });
});
