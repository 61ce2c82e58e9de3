import { describe, expect, it } from 'vitest';
import type { NormalizedSpec } from '../src';
import {
  baseSpec,
  type ExpectedError,
  expectError,
  expectValid,
  type Loose,
  parseObject,
  specWith,
  trainer,
  trainerOf,
} from './helpers';

/** One field, one value: either valid (and normalized as `check` says) or rejected with `error`. */
interface FieldCase {
  readonly name: string;
  readonly patch: (s: Loose) => void;
  readonly check?: (spec: NormalizedSpec) => void;
  readonly error?: ExpectedError;
}

const run = (cases: readonly FieldCase[]): void => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_, c) => {
    const r = parseObject(specWith(c.patch));
    if (c.error) expectError(r, c.error);
    else c.check!(expectValid(r));
  });
};

const T = 'allocations.trainer';
const G = `${T}.resources.gpus`;
const D = `${T}.distributed`;
const F = `${T}.failure_recovery`;
const gpus = (s: Loose): Loose => trainer(s).resources.gpus as Loose;
const dist = (s: Loose): Loose => trainer(s).distributed as Loose;

describe('the base spec', () => {
  it('is valid and normalized with every default explicit', () => {
    const spec = expectValid(parseObject(baseSpec()));
    expect(spec).toMatchObject({
      apiVersion: 'gpunet.io/v1',
      kind: 'Ensemble',
      metadata: { name: 'base', description: null, labels: {} },
      maxDurationMs: 7_200_000,
      subnet: null,
      budget: null,
      nodes: [],
      edgeConstraints: [],
    });
    expect(trainerOf(spec)).toEqual({
      name: 'trainer',
      type: 'task',
      executor: 'docker',
      execution: { image: 'img:1', cmd: ['python', 'train.py'], entrypoint: null, env: {}, workingDir: null },
      resources: {
        cpuMillicores: 4000,
        cpuArchitecture: null,
        ramBytes: 16 * 1024 ** 3,
        diskBytes: 0,
        gpus: {
          count: 4,
          vendor: 'nvidia',
          models: [],
          minVramBytes: 24e9,
          minComputeCapability: null,
          amdArchitectures: [],
          cuda: null,
          rocm: null,
          minTflops: { fp64: null, fp32: null, tf32: null, bf16: null, fp16: null, fp8: null, int8: null },
          mixedModels: false,
        },
      },
      ranks: 4,
      distributed: {
        framework: 'torchrun',
        gpusPerRank: 1,
        ranksPerNode: { min: 1, max: 4 },
        gpusPerNode: { min: 1, max: 4 },
        maxNodes: 2,
        placement: 'pack',
        interconnect: { minBandwidthBps: 10e9, maxRttUs: null, sameSite: false },
        rendezvousPort: 29500,
      },
      failureRecovery: {
        strategy: 'stay_down',
        maxRestarts: 0,
        replaceFailedNode: false,
        elastic: null,
        checkpointEnv: null,
        progressTimeoutMs: null,
      },
      maxDurationMs: 7_200_000,
      dnsName: 'trainer',
      ports: [],
      location: { accept: [], reject: [] },
    });
  });
});

describe('header and metadata', () => {
  run([
    {
      name: 'apiVersion missing',
      patch: (s) => delete s.apiVersion,
      error: { path: 'apiVersion', code: 'MISSING_FIELD' },
    },
    {
      name: 'apiVersion v2',
      patch: (s) => (s.apiVersion = 'gpunet.io/v2'),
      error: { path: 'apiVersion', code: 'UNSUPPORTED_VERSION', message: /gpunet\.io\/v1/ },
    },
    {
      name: "NuNet's version: V1",
      patch: (s) => {
        delete s.apiVersion;
        s.version = 'V1';
      },
      error: { path: 'version', code: 'UNKNOWN_FIELD', message: /did you mean 'apiVersion'/ },
    },
    {
      name: 'kind wrong',
      patch: (s) => (s.kind = 'Job'),
      error: { path: 'kind', code: 'UNSUPPORTED_VERSION' },
    },
    {
      name: 'metadata missing',
      patch: (s) => delete s.metadata,
      error: { path: 'metadata', code: 'MISSING_FIELD' },
    },
    {
      name: 'metadata.name not a DNS label',
      patch: (s) => (s.metadata.name = 'My_Job'),
      error: { path: 'metadata.name', code: 'INVALID_VALUE', message: /try 'my-job'/ },
    },
    {
      name: 'metadata.description too long',
      patch: (s) => (s.metadata.description = 'x'.repeat(1025)),
      error: { path: 'metadata.description', code: 'OUT_OF_RANGE' },
    },
    {
      name: 'metadata.labels sorted',
      patch: (s) => (s.metadata.labels = { 'gpunet.io/team': 'ml', app: 'x' }),
      check: (spec) => expect(Object.keys(spec.metadata.labels)).toEqual(['app', 'gpunet.io/team']),
    },
    {
      name: 'metadata.labels bad key',
      patch: (s) => (s.metadata.labels = { 'a b': 'x' }),
      error: { path: 'metadata.labels["a b"]', code: 'INVALID_VALUE' },
    },
    {
      name: 'metadata.labels non-text value',
      patch: (s) => (s.metadata.labels = { a: 1 }),
      error: { path: 'metadata.labels.a', code: 'INVALID_TYPE' },
    },
  ]);
});

describe('max_duration, subnet, budget', () => {
  run([
    {
      name: 'max_duration missing',
      patch: (s) => delete s.max_duration,
      error: { path: 'max_duration', code: 'MISSING_FIELD' },
    },
    {
      name: 'max_duration compound',
      patch: (s) => (s.max_duration = '1h30m'),
      check: (spec) => expect(spec.maxDurationMs).toBe(5_400_000),
    },
    {
      name: 'max_duration in words',
      patch: (s) => (s.max_duration = '2 hours'),
      error: { path: 'max_duration', code: 'INVALID_VALUE', message: /did you mean '2h'/ },
    },
    {
      name: 'max_duration bare number',
      patch: (s) => (s.max_duration = 7200),
      error: { path: 'max_duration', code: 'INVALID_TYPE', message: /add a unit/ },
    },
    {
      name: 'max_duration zero',
      patch: (s) => (s.max_duration = '0s'),
      error: { path: 'max_duration', code: 'OUT_OF_RANGE' },
    },
    {
      name: 'max_duration over a year',
      patch: (s) => (s.max_duration = '367d'),
      error: { path: 'max_duration', code: 'INVALID_VALUE', message: /at most/ },
    },
    {
      name: 'max_duration finer than a millisecond',
      patch: (s) => (s.max_duration = '1500us'),
      error: { path: 'max_duration', code: 'INVALID_VALUE', message: /milliseconds/ },
    },
    {
      name: 'subnet',
      patch: (s) => (s.subnet = 'eu-research'),
      check: (spec) => expect(spec.subnet).toBe('eu-research'),
    },
    {
      name: 'subnet invalid',
      patch: (s) => (s.subnet = 'EU research'),
      error: { path: 'subnet', code: 'INVALID_VALUE' },
    },
    {
      name: 'budget with a well-known asset',
      patch: (s) => (s.budget = { asset: 'USDC', max_price_per_gpu_hour: '2.50' }),
      check: (spec) =>
        expect(spec.budget).toEqual({
          asset: 'USDC',
          decimals: 6,
          maxPricePerGpuHourMinor: '2500000',
          maxTotalMinor: null,
        }),
    },
    {
      name: 'budget with an integer price and a cap',
      patch: (s) => (s.budget = { asset: 'USD', max_price_per_gpu_hour: 3, max_total: '1000.5' }),
      check: (spec) =>
        expect(spec.budget).toMatchObject({
          decimals: 2,
          maxPricePerGpuHourMinor: '300',
          maxTotalMinor: '100050',
        }),
    },
    {
      name: 'budget price as a float',
      patch: (s) => (s.budget = { asset: 'USDC', max_price_per_gpu_hour: 2.5 }),
      error: {
        path: 'budget.max_price_per_gpu_hour',
        code: 'INVALID_TYPE',
        message: /floats lose precision/,
      },
    },
    {
      name: 'budget price with too many decimals',
      patch: (s) => (s.budget = { asset: 'USD', max_price_per_gpu_hour: '2.505' }),
      error: { path: 'budget.max_price_per_gpu_hour', code: 'INVALID_VALUE', message: /2 decimal places/ },
    },
    {
      name: 'budget price not a number',
      patch: (s) => (s.budget = { asset: 'USD', max_price_per_gpu_hour: 'two' }),
      error: { path: 'budget.max_price_per_gpu_hour', code: 'INVALID_VALUE' },
    },
    {
      name: 'budget asset lower case',
      patch: (s) => (s.budget = { asset: 'usdc', max_price_per_gpu_hour: '1' }),
      error: { path: 'budget.asset', code: 'INVALID_VALUE' },
    },
    {
      name: 'budget unknown asset without decimals',
      patch: (s) => (s.budget = { asset: 'FOO', max_price_per_gpu_hour: '1' }),
      error: { path: 'budget.decimals', code: 'MISSING_FIELD' },
    },
    {
      name: 'budget unknown asset with decimals',
      patch: (s) => (s.budget = { asset: 'FOO', decimals: 9, max_price_per_gpu_hour: '0.000000001' }),
      check: (spec) => expect(spec.budget?.maxPricePerGpuHourMinor).toBe('1'),
    },
    {
      name: 'budget decimals contradict a well-known asset',
      patch: (s) => (s.budget = { asset: 'USDC', decimals: 2, max_price_per_gpu_hour: '1' }),
      error: { path: 'budget.decimals', code: 'CONFLICT', message: /6 decimals/ },
    },
    {
      name: 'budget decimals out of range',
      patch: (s) => (s.budget = { asset: 'FOO', decimals: 19, max_price_per_gpu_hour: '1' }),
      error: { path: 'budget.decimals', code: 'OUT_OF_RANGE' },
    },
    {
      name: 'budget price missing',
      patch: (s) => (s.budget = { asset: 'USDC' }),
      error: { path: 'budget.max_price_per_gpu_hour', code: 'MISSING_FIELD' },
    },
  ]);
});

describe('allocations', () => {
  run([
    {
      name: 'allocations missing',
      patch: (s) => delete s.allocations,
      error: { path: 'allocations', code: 'MISSING_FIELD' },
    },
    {
      name: 'allocations empty',
      patch: (s) => (s.allocations = {}),
      error: { path: 'allocations', code: 'MISSING_FIELD' },
    },
    {
      name: 'allocations as a list',
      patch: (s) => (s.allocations = [trainer(s)]),
      error: { path: 'allocations', code: 'INVALID_TYPE', message: /map of name/ },
    },
    {
      name: 'allocation name not a DNS label',
      patch: (s) => (s.allocations = { Trainer_1: s.allocations.trainer }),
      error: { path: 'allocations.Trainer_1', code: 'INVALID_VALUE', message: /try 'trainer-1'/ },
    },
    {
      name: 'type service',
      patch: (s) => (trainer(s).type = 'service'),
      check: (spec) => expect(trainerOf(spec).type).toBe('service'),
    },
    {
      name: 'type unknown',
      patch: (s) => (trainer(s).type = 'job'),
      error: { path: `${T}.type`, code: 'INVALID_VALUE', message: /task, service/ },
    },
    {
      name: 'executor unknown',
      patch: (s) => (trainer(s).executor = 'firecracker'),
      error: { path: `${T}.executor`, code: 'INVALID_VALUE' },
    },
    {
      name: 'execution missing',
      patch: (s) => delete trainer(s).execution,
      error: { path: `${T}.execution`, code: 'MISSING_FIELD' },
    },
    {
      name: 'execution.cmd as a string',
      patch: (s) => (trainer(s).execution.cmd = 'python train.py'),
      error: { path: `${T}.execution.cmd`, code: 'INVALID_TYPE', message: /must be a list/ },
    },
    {
      name: 'execution.entrypoint',
      patch: (s) => (trainer(s).execution.entrypoint = ['/bin/sh', '-c']),
      check: (spec) => expect(trainerOf(spec).execution.entrypoint).toEqual(['/bin/sh', '-c']),
    },
    {
      name: 'execution.env sorted',
      patch: (s) => (trainer(s).execution.env = { B: '2', A: '1' }),
      check: (spec) =>
        expect(Object.entries(trainerOf(spec).execution.env)).toEqual([
          ['A', '1'],
          ['B', '2'],
        ]),
    },
    {
      name: 'execution.env as a NuNet list',
      patch: (s) => (trainer(s).execution.env = ['A=1']),
      error: { path: `${T}.execution.env`, code: 'INVALID_TYPE', message: /NAME: value/ },
    },
    {
      name: 'execution.env number value',
      patch: (s) => (trainer(s).execution.env = { STEPS: 100 }),
      error: { path: `${T}.execution.env.STEPS`, code: 'INVALID_TYPE', message: /quote it/ },
    },
    {
      name: 'execution.env bad name',
      patch: (s) => (trainer(s).execution.env = { '1X': 'a' }),
      error: {
        path: `${T}.execution.env["1X"]`,
        code: 'INVALID_VALUE',
        message: /environment variable name/,
      },
    },
    {
      name: 'execution.env reserved name',
      patch: (s) => (trainer(s).execution.env = { MASTER_ADDR: 'x' }),
      error: { path: `${T}.execution.env.MASTER_ADDR`, code: 'INVALID_VALUE', message: /set by gpunet/ },
    },
    {
      name: 'execution.env reserved prefix',
      patch: (s) => (trainer(s).execution.env = { GPUNET_JOB: 'x' }),
      error: { path: `${T}.execution.env.GPUNET_JOB`, code: 'INVALID_VALUE' },
    },
    {
      name: 'execution.working_dir',
      patch: (s) => (trainer(s).execution.working_dir = '/work'),
      check: (spec) => expect(trainerOf(spec).execution.workingDir).toBe('/work'),
    },
    {
      name: 'execution.working_directory (NuNet)',
      patch: (s) => (trainer(s).execution.working_directory = '/work'),
      error: {
        path: `${T}.execution.working_directory`,
        code: 'UNKNOWN_FIELD',
        message: /did you mean 'working_dir'/,
      },
    },
    {
      name: 'max_duration own',
      patch: (s) => (trainer(s).max_duration = '30m'),
      check: (spec) => expect(trainerOf(spec).maxDurationMs).toBe(1_800_000),
    },
    {
      name: 'dns_name, not honoured yet',
      patch: (s) => (trainer(s).dns_name = 'rank'),
      error: { path: `${T}.dns_name`, code: 'NOT_SUPPORTED', message: /no DNS/ },
    },
    {
      name: 'no dns_name: the allocation name',
      patch: () => undefined,
      check: (spec) => expect(trainerOf(spec).dnsName).toBe('trainer'),
    },
    {
      name: 'dns_name invalid',
      patch: (s) => (trainer(s).dns_name = 'a.b'),
      error: { path: `${T}.dns_name`, code: 'INVALID_VALUE' },
    },
    {
      name: 'ports sorted with defaults',
      patch: (s) => {
        trainer(s).distributed.gpus_per_node = { max: 1 };
        trainer(s).distributed.max_nodes = 4;
        trainer(s).ports = [{ private: 9000, protocol: 'udp' }, { private: 8080 }];
      },
      check: (spec) =>
        expect(trainerOf(spec).ports).toEqual([
          { private: 8080, public: null, protocol: 'tcp' },
          { private: 9000, public: null, protocol: 'udp' },
        ]),
    },
    {
      name: 'a public port, not honoured yet',
      patch: (s) => (trainer(s).ports = [{ private: 8080, public: 30080 }]),
      error: { path: `${T}.ports[0].public`, code: 'NOT_SUPPORTED', message: /no port is published/ },
    },
    {
      name: 'ports public below 1025',
      patch: (s) => (trainer(s).ports = [{ private: 80, public: 80 }]),
      error: { path: `${T}.ports[0].public`, code: 'OUT_OF_RANGE', message: /at least 1025/ },
    },
    {
      name: 'ports private 0',
      patch: (s) => (trainer(s).ports = [{ private: 0 }]),
      error: { path: `${T}.ports[0].private`, code: 'OUT_OF_RANGE' },
    },
    {
      name: 'ports protocol',
      patch: (s) => (trainer(s).ports = [{ private: 1, protocol: 'sctp' }]),
      error: { path: `${T}.ports[0].protocol`, code: 'INVALID_VALUE' },
    },
    {
      name: 'location normalized',
      patch: (s) =>
        (trainer(s).location = {
          accept: [{ continent: 'Europe' }, { country: 'de', city: ' Berlin ' }, { continent: 'EU' }],
          reject: [{ country: 'us' }],
        }),
      check: (spec) =>
        expect(trainerOf(spec).location).toEqual({
          accept: [
            { continent: 'EU', country: null, city: null, asn: null, isp: null },
            { continent: null, country: 'DE', city: 'Berlin', asn: null, isp: null },
          ],
          reject: [{ continent: null, country: 'US', city: null, asn: null, isp: null }],
        }),
    },
    {
      name: 'location by asn, not honoured yet',
      patch: (s) => (trainer(s).location = { reject: [{ asn: 'AS64512' }] }),
      error: { path: `${T}.location.reject[0].asn`, code: 'NOT_SUPPORTED', message: /would reject none/ },
    },
    {
      name: 'location by isp, not honoured yet',
      patch: (s) => (trainer(s).location = { accept: [{ isp: 'Example' }] }),
      error: {
        path: `${T}.location.accept[0].isp`,
        code: 'NOT_SUPPORTED',
        message: /could match no provider/,
      },
    },
    {
      name: 'location continent unknown',
      patch: (s) => (trainer(s).location = { accept: [{ continent: 'Atlantis' }] }),
      error: { path: `${T}.location.accept[0].continent`, code: 'INVALID_VALUE' },
    },
    {
      name: 'location country not ISO',
      patch: (s) => (trainer(s).location = { accept: [{ country: 'Germany' }] }),
      error: { path: `${T}.location.accept[0].country`, code: 'INVALID_VALUE', message: /alpha-2/ },
    },
    {
      name: 'location entry empty',
      patch: (s) => (trainer(s).location = { accept: [{}] }),
      error: { path: `${T}.location.accept[0]`, code: 'MISSING_FIELD' },
    },
    {
      name: 'location region (old NuNet) is unknown',
      patch: (s) => (trainer(s).location = { accept: [{ region: 'eu' }] }),
      error: { path: `${T}.location.accept[0].region`, code: 'UNKNOWN_FIELD' },
    },
  ]);
});

describe('resources', () => {
  run([
    {
      name: 'resources missing',
      patch: (s) => delete trainer(s).resources,
      error: { path: `${T}.resources`, code: 'MISSING_FIELD' },
    },
    {
      name: 'cpu.cores fractional',
      patch: (s) => (trainer(s).resources.cpu = { cores: 0.5, architecture: 'arm64' }),
      check: (spec) =>
        expect(trainerOf(spec).resources).toMatchObject({ cpuMillicores: 500, cpuArchitecture: 'arm64' }),
    },
    {
      name: 'cpu.cores zero',
      patch: (s) => (trainer(s).resources.cpu.cores = 0),
      error: { path: `${T}.resources.cpu.cores`, code: 'OUT_OF_RANGE' },
    },
    {
      name: 'cpu.cores finer than a millicore',
      patch: (s) => (trainer(s).resources.cpu.cores = 0.0005),
      error: { path: `${T}.resources.cpu.cores`, code: 'INVALID_VALUE', message: /millicore/ },
    },
    {
      name: 'cpu.architecture unknown',
      patch: (s) => (trainer(s).resources.cpu.architecture = 'x86'),
      error: { path: `${T}.resources.cpu.architecture`, code: 'INVALID_VALUE' },
    },
    {
      name: 'ram.size bare number',
      patch: (s) => (trainer(s).resources.ram.size = 16),
      error: {
        path: `${T}.resources.ram.size`,
        code: 'INVALID_TYPE',
        message: /add a unit: '16GB' or '16GiB'/,
      },
    },
    {
      name: 'ram.size KB is ambiguous',
      patch: (s) => (trainer(s).resources.ram.size = '512KB'),
      error: { path: `${T}.resources.ram.size`, code: 'INVALID_VALUE', message: /kB.*KiB/ },
    },
    {
      name: 'ram.size lower-case unit',
      patch: (s) => (trainer(s).resources.ram.size = '16gib'),
      error: { path: `${T}.resources.ram.size`, code: 'INVALID_VALUE', message: /did you mean '16GiB'/ },
    },
    {
      name: 'ram.size zero',
      patch: (s) => (trainer(s).resources.ram.size = '0GB'),
      error: { path: `${T}.resources.ram.size`, code: 'OUT_OF_RANGE' },
    },
    {
      name: 'ram.size with a space',
      patch: (s) => (trainer(s).resources.ram.size = '1.5 GB'),
      check: (spec) => expect(trainerOf(spec).resources.ramBytes).toBe(1_500_000_000),
    },
    {
      name: 'disk, not honoured yet',
      patch: (s) => (trainer(s).resources.disk = { size: '1TB' }),
      error: { path: `${T}.resources.disk`, code: 'NOT_SUPPORTED', message: /workspace_per_rank/ },
    },
    {
      name: 'disk.size fractional bytes',
      patch: (s) => (trainer(s).resources.disk = { size: '1.5B' }),
      error: { path: `${T}.resources.disk.size`, code: 'INVALID_VALUE', message: /whole number of bytes/ },
    },
    {
      name: 'resources.memory is unknown',
      patch: (s) => (trainer(s).resources.memory = { size: '1GB' }),
      error: { path: `${T}.resources.memory`, code: 'UNKNOWN_FIELD' },
    },
  ]);
});

describe('resources.gpus', () => {
  run([
    {
      name: 'gpus as a NuNet list',
      patch: (s) => (trainer(s).resources.gpus = [{ vendor: 'NVIDIA', vram: 24 }]),
      error: { path: G, code: 'INVALID_TYPE', message: /not one entry per GPU/ },
    },
    {
      name: 'count missing',
      patch: (s) => delete gpus(s).count,
      error: { path: `${G}.count`, code: 'MISSING_FIELD' },
    },
    {
      name: 'count zero',
      patch: (s) => (gpus(s).count = 0),
      error: { path: `${G}.count`, code: 'OUT_OF_RANGE' },
    },
    {
      name: 'count above 4096',
      patch: (s) => (gpus(s).count = 4097),
      error: { path: `${G}.count`, code: 'OUT_OF_RANGE', message: /4096/ },
    },
    {
      name: 'count fractional',
      patch: (s) => (gpus(s).count = 2.5),
      error: { path: `${G}.count`, code: 'INVALID_TYPE', message: /whole number/ },
    },
    {
      name: 'vendor default any',
      patch: (s) => delete gpus(s).vendor,
      check: (spec) => expect(trainerOf(spec).resources.gpus?.vendor).toBe('any'),
    },
    {
      name: 'vendor in capitals',
      patch: (s) => (gpus(s).vendor = 'NVIDIA'),
      error: { path: `${G}.vendor`, code: 'INVALID_VALUE', message: /did you mean 'nvidia'/ },
    },
    {
      name: 'models canonical',
      patch: (s) => (gpus(s).models = ['rtx  4090', 'A100', 'RTX 4090']),
      check: (spec) => expect(trainerOf(spec).resources.gpus?.models).toEqual(['A100', 'RTX 4090']),
    },
    {
      name: 'models blank',
      patch: (s) => (gpus(s).models = ['  ']),
      error: { path: `${G}.models[0]`, code: 'INVALID_VALUE' },
    },
    {
      name: 'model (NuNet, singular)',
      patch: (s) => (gpus(s).model = 'A100'),
      error: { path: `${G}.model`, code: 'UNKNOWN_FIELD', message: /did you mean 'models'/ },
    },
    {
      name: 'vram (NuNet)',
      patch: (s) => (gpus(s).vram = '24GB'),
      error: { path: `${G}.vram`, code: 'UNKNOWN_FIELD', message: /did you mean 'min_vram'/ },
    },
    {
      name: 'vram_min (typo)',
      patch: (s) => (gpus(s).vram_min = '24GB'),
      error: {
        path: `${G}.vram_min`,
        code: 'UNKNOWN_FIELD',
        message: /unknown field 'vram_min' — did you mean 'min_vram'\?/,
      },
    },
    {
      name: 'min_vram in gigabits',
      patch: (s) => (gpus(s).min_vram = '40Gb'),
      error: { path: `${G}.min_vram`, code: 'INVALID_VALUE', message: /bits/ },
    },
    {
      name: 'min_vram binary',
      patch: (s) => (gpus(s).min_vram = '80GiB'),
      check: (spec) => expect(trainerOf(spec).resources.gpus?.minVramBytes).toBe(80 * 1024 ** 3),
    },
    {
      name: 'min_compute_capability number',
      patch: (s) => (gpus(s).min_compute_capability = 9),
      check: (spec) =>
        expect(trainerOf(spec).resources.gpus?.minComputeCapability).toEqual({ major: 9, minor: 0 }),
    },
    {
      name: 'min_compute_capability text',
      patch: (s) => (gpus(s).min_compute_capability = '8.6'),
      check: (spec) =>
        expect(trainerOf(spec).resources.gpus?.minComputeCapability).toEqual({ major: 8, minor: 6 }),
    },
    {
      name: 'min_compute_capability two minor digits',
      patch: (s) => (gpus(s).min_compute_capability = 8.65),
      error: { path: `${G}.min_compute_capability`, code: 'INVALID_VALUE' },
    },
    {
      name: 'min_compute_capability text without minor',
      patch: (s) => (gpus(s).min_compute_capability = '9'),
      error: { path: `${G}.min_compute_capability`, code: 'INVALID_VALUE', message: /8\.0/ },
    },
    {
      name: 'min_compute_capability boolean',
      patch: (s) => (gpus(s).min_compute_capability = true),
      error: { path: `${G}.min_compute_capability`, code: 'INVALID_TYPE', message: /text or a number/ },
    },
    {
      name: 'amd_architectures',
      patch: (s) =>
        Object.assign(gpus(s), { vendor: 'amd', amd_architectures: ['gfx942', 'gfx90a', 'gfx942'] }),
      check: (spec) => expect(trainerOf(spec).resources.gpus?.amdArchitectures).toEqual(['gfx90a', 'gfx942']),
    },
    {
      name: 'amd_architectures marketing name',
      patch: (s) => Object.assign(gpus(s), { vendor: 'amd', amd_architectures: ['MI300'] }),
      error: { path: `${G}.amd_architectures[0]`, code: 'INVALID_VALUE', message: /gfx target/ },
    },
    {
      name: 'cuda canonical range',
      patch: (s) => (gpus(s).cuda = '>=12.2'),
      check: (spec) => expect(trainerOf(spec).resources.gpus?.cuda).toBe('>=12.2.0'),
    },
    {
      name: 'cuda x-range',
      patch: (s) => (gpus(s).cuda = '12.x'),
      check: (spec) => expect(trainerOf(spec).resources.gpus?.cuda).toBe('>=12.0.0 <13.0.0-0'),
    },
    {
      name: 'cuda not a range',
      patch: (s) => (gpus(s).cuda = 'latest'),
      error: { path: `${G}.cuda`, code: 'INVALID_VALUE', message: /version range/ },
    },
    {
      name: 'cuda empty range',
      patch: (s) => (gpus(s).cuda = '>=13 <12'),
      error: { path: `${G}.cuda`, code: 'INVALID_VALUE', message: /matches no version/ },
    },
    {
      name: 'cuda as a number',
      patch: (s) => (gpus(s).cuda = 12.2),
      error: { path: `${G}.cuda`, code: 'INVALID_TYPE', message: /in quotes/ },
    },
    {
      name: 'rocm',
      patch: (s) => Object.assign(gpus(s), { vendor: 'amd', rocm: '>=6.0 <7' }),
      check: (spec) => expect(trainerOf(spec).resources.gpus?.rocm).toBe('>=6.0.0 <7.0.0-0'),
    },
    {
      name: 'min_tflops',
      patch: (s) => (gpus(s).min_tflops = { bf16: 300, fp64: 20.5 }),
      check: (spec) =>
        expect(trainerOf(spec).resources.gpus?.minTflops).toMatchObject({
          bf16: 300,
          fp64: 20.5,
          fp32: null,
        }),
    },
    {
      name: 'min_tflops negative',
      patch: (s) => (gpus(s).min_tflops = { fp16: -1 }),
      error: { path: `${G}.min_tflops.fp16`, code: 'OUT_OF_RANGE' },
    },
    {
      name: 'min_tflops unknown precision',
      patch: (s) => (gpus(s).min_tflops = { fp4: 1 }),
      error: { path: `${G}.min_tflops.fp4`, code: 'UNKNOWN_FIELD' },
    },
    {
      name: 'mixed_models',
      patch: (s) => (gpus(s).mixed_models = true),
      check: (spec) => expect(trainerOf(spec).resources.gpus?.mixedModels).toBe(true),
    },
    {
      name: 'mixed_models not boolean',
      patch: (s) => (gpus(s).mixed_models = 'yes'),
      error: { path: `${G}.mixed_models`, code: 'INVALID_TYPE' },
    },
  ]);
});

describe('distributed', () => {
  run([
    {
      name: 'framework missing',
      patch: (s) => delete dist(s).framework,
      error: { path: `${D}.framework`, code: 'MISSING_FIELD' },
    },
    {
      name: 'framework misspelt',
      patch: (s) => (dist(s).framework = 'torchrum'),
      error: { path: `${D}.framework`, code: 'INVALID_VALUE', message: /did you mean 'torchrun'/ },
    },
    {
      name: 'ranks consistent with the GPU count',
      patch: (s) => (dist(s).ranks = 4),
      check: (spec) => expect(trainerOf(spec).ranks).toBe(4),
    },
    {
      name: 'ranks zero',
      patch: (s) => (dist(s).ranks = 0),
      error: { path: `${D}.ranks`, code: 'OUT_OF_RANGE' },
    },
    {
      name: 'gpus_per_rank',
      patch: (s) => (dist(s).gpus_per_rank = 2),
      check: (spec) =>
        expect(trainerOf(spec)).toMatchObject({
          ranks: 2,
          distributed: { gpusPerRank: 2, gpusPerNode: { min: 2, max: 4 } },
        }),
    },
    {
      name: 'gpus_per_rank above 64',
      patch: (s) => (dist(s).gpus_per_rank = 65),
      error: { path: `${D}.gpus_per_rank`, code: 'OUT_OF_RANGE' },
    },
    {
      name: 'gpus_per_node',
      patch: (s) => (dist(s).gpus_per_node = { min: 2, max: 2 }),
      check: (spec) =>
        expect(trainerOf(spec).distributed).toMatchObject({
          ranksPerNode: { min: 2, max: 2 },
          gpusPerNode: { min: 2, max: 2 },
          maxNodes: 2,
        }),
    },
    {
      name: 'gpus_per_node max above the count is the count',
      patch: (s) => (dist(s).gpus_per_node = { max: 64 }),
      check: (spec) => expect(trainerOf(spec).distributed?.gpusPerNode).toEqual({ min: 1, max: 4 }),
    },
    {
      name: 'gpus_per_node bad bound',
      patch: (s) => (dist(s).gpus_per_node = { max: 0 }),
      error: { path: `${D}.gpus_per_node.max`, code: 'OUT_OF_RANGE' },
    },
    {
      name: 'max_nodes default: one per rank',
      patch: (s) => delete dist(s).max_nodes,
      check: (spec) => expect(trainerOf(spec).distributed?.maxNodes).toBe(4),
    },
    {
      name: 'max_nodes zero',
      patch: (s) => (dist(s).max_nodes = 0),
      error: { path: `${D}.max_nodes`, code: 'OUT_OF_RANGE' },
    },
    {
      name: 'placement spread',
      patch: (s) => (dist(s).placement = 'spread'),
      check: (spec) => expect(trainerOf(spec).distributed?.placement).toBe('spread'),
    },
    {
      name: 'placement unknown',
      patch: (s) => (dist(s).placement = 'binpack'),
      error: { path: `${D}.placement`, code: 'INVALID_VALUE' },
    },
    {
      name: 'interconnect',
      patch: (s) => (dist(s).interconnect = { min_bandwidth: '100Gbps', max_rtt: '0.5ms', same_site: true }),
      check: (spec) =>
        expect(trainerOf(spec).distributed?.interconnect).toEqual({
          minBandwidthBps: 100e9,
          maxRttUs: 500,
          sameSite: true,
        }),
    },
    {
      name: 'interconnect bandwidth in bytes per second',
      patch: (s) => (dist(s).interconnect = { min_bandwidth: '10GB/s' }),
      error: { path: `${D}.interconnect.min_bandwidth`, code: 'INVALID_VALUE', message: /80Gbps/ },
    },
    {
      name: 'interconnect bandwidth bare',
      patch: (s) => (dist(s).interconnect = { min_bandwidth: 10 }),
      error: { path: `${D}.interconnect.min_bandwidth`, code: 'INVALID_TYPE', message: /10Gbps/ },
    },
    {
      name: 'interconnect rtt in µs',
      patch: (s) => (dist(s).interconnect = { max_rtt: '500µs' }),
      error: { path: `${D}.interconnect.max_rtt`, code: 'INVALID_VALUE', message: /'500us'/ },
    },
    {
      name: 'interconnect rtt zero',
      patch: (s) => (dist(s).interconnect = { max_rtt: '0ms' }),
      error: { path: `${D}.interconnect.max_rtt`, code: 'OUT_OF_RANGE' },
    },
    {
      name: 'interconnect rtt (NuNet)',
      patch: (s) => (dist(s).interconnect = { rtt: 5 }),
      error: { path: `${D}.interconnect.rtt`, code: 'UNKNOWN_FIELD', message: /max_rtt/ },
    },
    {
      name: 'rendezvous_port',
      patch: (s) => (dist(s).rendezvous_port = 29400),
      check: (spec) => expect(trainerOf(spec).distributed?.rendezvousPort).toBe(29400),
    },
    {
      name: 'rendezvous_port privileged',
      patch: (s) => (dist(s).rendezvous_port = 80),
      error: { path: `${D}.rendezvous_port`, code: 'OUT_OF_RANGE' },
    },
    {
      name: 'a field of another section',
      patch: (s) => (gpus(s).max_nodes = 2),
      error: { path: `${G}.max_nodes`, code: 'UNKNOWN_FIELD', message: /belongs under .*distributed/ },
    },
  ]);
});

describe('failure_recovery', () => {
  const fr = (s: Loose, v: unknown): void => {
    trainer(s).failure_recovery = v;
  };
  run([
    {
      name: 'restart_all with defaults',
      patch: (s) => fr(s, { strategy: 'restart_all' }),
      check: (spec) =>
        expect(trainerOf(spec).failureRecovery).toEqual({
          strategy: 'restart_all',
          maxRestarts: 3,
          replaceFailedNode: false,
          elastic: null,
          checkpointEnv: null,
          progressTimeoutMs: null,
        }),
    },
    {
      name: 'a NuNet string',
      patch: (s) => fr(s, 'one_for_all'),
      error: { path: F, code: 'INVALID_TYPE', message: /strategy: restart_all/ },
    },
    {
      name: 'a NuNet strategy word',
      patch: (s) => fr(s, { strategy: 'one_for_all' }),
      error: { path: `${F}.strategy`, code: 'INVALID_VALUE', message: /use 'restart_all'/ },
    },
    {
      name: 'max_restarts negative',
      patch: (s) => fr(s, { strategy: 'restart_all', max_restarts: -1 }),
      error: { path: `${F}.max_restarts`, code: 'OUT_OF_RANGE' },
    },
    {
      name: 'max_restarts too many',
      patch: (s) => fr(s, { strategy: 'restart_all', max_restarts: 1001 }),
      error: { path: `${F}.max_restarts`, code: 'OUT_OF_RANGE' },
    },
    {
      name: 'replace_failed_node: false, what a restart does today',
      patch: (s) => fr(s, { strategy: 'restart_all', replace_failed_node: false }),
      check: (spec) => expect(trainerOf(spec).failureRecovery.replaceFailedNode).toBe(false),
    },
    {
      name: 'replace_failed_node: true, not honoured yet',
      patch: (s) => fr(s, { strategy: 'restart_all', replace_failed_node: true }),
      error: { path: `${F}.replace_failed_node`, code: 'NOT_SUPPORTED', message: /never on new ones/ },
    },
    {
      name: 'elastic, not honoured yet',
      patch: (s) => fr(s, { strategy: 'restart_all', elastic: { min_nodes: 1 } }),
      error: { path: `${F}.elastic`, code: 'NOT_SUPPORTED', message: /never on fewer nodes/ },
    },
    {
      name: 'elastic without min_nodes',
      patch: (s) => fr(s, { strategy: 'restart_all', elastic: {} }),
      error: { path: `${F}.elastic.min_nodes`, code: 'MISSING_FIELD' },
    },
    {
      name: 'checkpoint_env, not honoured yet',
      patch: (s) => fr(s, { strategy: 'restart_all', checkpoint_env: 'CKPT' }),
      error: { path: `${F}.checkpoint_env`, code: 'NOT_SUPPORTED', message: /checkpoint directory/ },
    },
    {
      name: 'progress_timeout',
      patch: (s) => fr(s, { strategy: 'restart_all', progress_timeout: '90s' }),
      check: (spec) => expect(trainerOf(spec).failureRecovery.progressTimeoutMs).toBe(90_000),
    },
    {
      name: 'progress_timeout under a second',
      patch: (s) => fr(s, { strategy: 'restart_all', progress_timeout: '500ms' }),
      error: { path: `${F}.progress_timeout`, code: 'OUT_OF_RANGE', message: /at least 1s/ },
    },
    {
      name: 'progress_timeout without a unit',
      patch: (s) => fr(s, { progress_timeout: 90 }),
      error: { path: `${F}.progress_timeout`, code: 'INVALID_TYPE' },
    },
    {
      name: 'checkpoint_env invalid',
      patch: (s) => fr(s, { checkpoint_env: 'ckpt dir' }),
      error: { path: `${F}.checkpoint_env`, code: 'INVALID_VALUE' },
    },
  ]);
});

describe('nodes and edge constraints', () => {
  const withService = (s: Loose): Loose => {
    s.allocations.web = {
      type: 'service',
      execution: { image: 'web:1' },
      resources: { cpu: { cores: 1 }, ram: { size: '1GiB' } },
    };
    return s;
  };
  run([
    {
      name: 'a node',
      patch: (s) =>
        (withService(s).nodes = {
          control: { allocations: ['web'], peer: 'edge-1', location: { accept: [{ country: 'NL' }] } },
        }),
      check: (spec) =>
        expect(spec.nodes).toEqual([
          {
            name: 'control',
            allocations: ['web'],
            peer: 'edge-1',
            location: {
              accept: [{ continent: null, country: 'NL', city: null, asn: null, isp: null }],
              reject: [],
            },
          },
        ]),
    },
    {
      name: 'a node without allocations',
      patch: (s) => (s.nodes = { n: { allocations: [] } }),
      error: { path: 'nodes.n.allocations', code: 'OUT_OF_RANGE' },
    },
    {
      name: 'a node name not a label',
      patch: (s) => (withService(s).nodes = { 'N 1': { allocations: ['web'] } }),
      error: { path: 'nodes["N 1"]', code: 'INVALID_VALUE' },
    },
    {
      name: 'an edge constraint, sorted',
      patch: (s) =>
        (withService(s).edge_constraints = [
          { between: ['web', 'trainer'], max_rtt: '30ms', min_bandwidth: '1Gbps' },
        ]),
      check: (spec) =>
        expect(spec.edgeConstraints).toEqual([
          { between: ['trainer', 'web'], maxRttUs: 30_000, minBandwidthBps: 1e9 },
        ]),
    },
    {
      name: 'an edge with one end',
      patch: (s) => (withService(s).edge_constraints = [{ between: ['web'], max_rtt: '1ms' }]),
      error: { path: 'edge_constraints[0].between', code: 'OUT_OF_RANGE' },
    },
    {
      name: 'an edge in NuNet words',
      patch: (s) => (withService(s).edge_constraints = [{ edges: ['web', 'trainer'], rtt: 30, bw: 1e9 }]),
      error: { path: 'edge_constraints[0].edges', code: 'UNKNOWN_FIELD', message: /did you mean 'between'/ },
    },
    {
      name: 'an edge bandwidth zero',
      patch: (s) =>
        (withService(s).edge_constraints = [{ between: ['web', 'trainer'], min_bandwidth: '0Gbps' }]),
      error: { path: 'edge_constraints[0].min_bandwidth', code: 'OUT_OF_RANGE' },
    },
    {
      name: 'an unknown top-level field',
      patch: (s) => (s.supervisor = { strategy: 'OneForOne' }),
      error: { path: 'supervisor', code: 'UNKNOWN_FIELD', message: /not supported/ },
    },
  ]);
});
