import { describe, expect, it } from 'vitest';
import type { NormalizedSpec } from '../src';
import {
  type ExpectedError,
  expectError,
  expectValid,
  type Loose,
  parseObject,
  specWith,
  trainer,
  trainerOf,
} from './helpers';

/** A rule across fields: a named case, the patch that breaks (or satisfies) it, what must happen. */
interface RuleCase {
  readonly name: string;
  readonly patch: (s: Loose) => void;
  readonly error?: ExpectedError;
  readonly check?: (spec: NormalizedSpec, warnings: readonly string[]) => void;
}

const run = (cases: readonly RuleCase[]): void => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_, c) => {
    const r = parseObject(specWith(c.patch));
    if (c.error) {
      expectError(r, c.error);
    } else {
      const spec = expectValid(r);
      c.check?.(
        spec,
        r.warnings.map((w) => `${w.path}: ${w.message}`),
      );
    }
  });
};

const T = 'allocations.trainer';
const D = `${T}.distributed`;
const G = `${T}.resources.gpus`;
const F = `${T}.failure_recovery`;
const gpus = (s: Loose): Loose => trainer(s).resources.gpus as Loose;
const dist = (s: Loose): Loose => trainer(s).distributed as Loose;
const cpuGang = (s: Loose): void => {
  delete trainer(s).resources.gpus;
  trainer(s).distributed = { framework: 'torchrun', ranks: 4 };
};
const service = (name: string): Loose => ({
  type: 'service',
  execution: { image: `${name}:1` },
  resources: { cpu: { cores: 1 }, ram: { size: '1GiB' } },
});

describe('executor', () => {
  run([
    {
      name: 'docker needs an image',
      patch: (s) => delete trainer(s).execution.image,
      error: { path: `${T}.execution.image`, code: 'MISSING_FIELD' },
    },
    {
      name: 'process forbids an image',
      patch: (s) => (trainer(s).executor = 'process'),
      error: { path: `${T}.execution.image`, code: 'CONFLICT', message: /process executor/ },
    },
    {
      name: 'process needs a cmd',
      patch: (s) => Object.assign(trainer(s), { executor: 'process', execution: { cmd: [] } }),
      error: { path: `${T}.execution.cmd`, code: 'MISSING_FIELD' },
    },
    {
      name: 'process with a relative working_dir is fine',
      patch: (s) =>
        Object.assign(trainer(s), {
          executor: 'process',
          execution: { cmd: ['./run'], working_dir: 'jobs' },
        }),
      check: (spec) => expect(trainerOf(spec).execution).toMatchObject({ image: null, workingDir: 'jobs' }),
    },
    {
      name: 'docker working_dir must be absolute',
      patch: (s) => (trainer(s).execution.working_dir = 'work'),
      error: { path: `${T}.execution.working_dir`, code: 'INVALID_VALUE', message: /absolute/ },
    },
  ]);
});

describe('vendor-specific GPU fields', () => {
  run([
    {
      name: 'compute capability with vendor amd',
      patch: (s) => Object.assign(gpus(s), { vendor: 'amd', min_compute_capability: '8.0' }),
      error: { path: `${G}.min_compute_capability`, code: 'CONFLICT', message: /NVIDIA/ },
    },
    {
      name: 'cuda with vendor amd',
      patch: (s) => Object.assign(gpus(s), { vendor: 'amd', cuda: '>=12' }),
      error: { path: `${G}.cuda`, code: 'CONFLICT' },
    },
    {
      name: 'rocm with vendor nvidia',
      patch: (s) => (gpus(s).rocm = '>=6'),
      error: { path: `${G}.rocm`, code: 'CONFLICT', message: /AMD GPUs, but vendor is nvidia/ },
    },
    {
      name: 'amd_architectures with vendor nvidia',
      patch: (s) => (gpus(s).amd_architectures = ['gfx942']),
      error: { path: `${G}.amd_architectures`, code: 'CONFLICT' },
    },
    {
      name: 'vendor any may state both runtimes',
      patch: (s) =>
        Object.assign(gpus(s), {
          vendor: 'any',
          cuda: '>=12',
          rocm: '>=6',
          min_compute_capability: '8.0',
          amd_architectures: ['gfx942'],
        }),
      check: (spec) =>
        expect(trainerOf(spec).resources.gpus).toMatchObject({
          vendor: 'any',
          cuda: '>=12.0.0',
          rocm: '>=6.0.0',
        }),
    },
    {
      name: 'mixed_models with one model warns',
      patch: (s) => Object.assign(gpus(s), { models: ['A100'], mixed_models: true }),
      check: (_, warnings) =>
        expect(warnings).toContainEqual(expect.stringMatching(/mixed_models has no effect/)),
    },
  ]);
});

describe('gang shape', () => {
  run([
    {
      name: 'count not a multiple of gpus_per_rank',
      patch: (s) => (dist(s).gpus_per_rank = 3),
      error: { path: `${G}.count`, code: 'INVALID_VALUE', message: /not a multiple of gpus_per_rank 3/ },
    },
    {
      name: 'explicit ranks contradict the GPU count',
      patch: (s) => (dist(s).ranks = 8),
      error: { path: `${D}.ranks`, code: 'CONFLICT', message: /4 \/ gpus_per_rank 1 = 4/ },
    },
    {
      name: 'a CPU-only gang needs ranks',
      patch: (s) => (cpuGang(s), delete dist(s).ranks),
      error: { path: `${D}.ranks`, code: 'MISSING_FIELD' },
    },
    {
      name: 'a CPU-only gang',
      patch: (s) => (cpuGang(s), (dist(s).ranks_per_node = { max: 2 })),
      check: (spec) =>
        expect(trainerOf(spec)).toMatchObject({
          ranks: 4,
          resources: { gpus: null },
          distributed: { gpusPerRank: 0, ranksPerNode: { min: 1, max: 2 }, gpusPerNode: null, maxNodes: 4 },
        }),
    },
    {
      name: 'gpus_per_rank without GPUs',
      patch: (s) => (cpuGang(s), (dist(s).gpus_per_rank = 1)),
      error: { path: `${D}.gpus_per_rank`, code: 'CONFLICT' },
    },
    {
      name: 'gpus_per_node without GPUs',
      patch: (s) => (cpuGang(s), (dist(s).gpus_per_node = { max: 1 })),
      error: { path: `${D}.gpus_per_node`, code: 'CONFLICT', message: /ranks_per_node/ },
    },
    {
      name: 'gpus_per_node and ranks_per_node together',
      patch: (s) => Object.assign(dist(s), { gpus_per_node: { max: 2 }, ranks_per_node: { max: 2 } }),
      error: { path: `${D}.ranks_per_node`, code: 'CONFLICT' },
    },
    {
      name: 'gpus_per_node not whole ranks',
      patch: (s) => Object.assign(dist(s), { gpus_per_rank: 2, gpus_per_node: { max: 3 } }),
      error: {
        path: `${D}.gpus_per_node.max`,
        code: 'INVALID_VALUE',
        message: /multiple of gpus_per_rank 2/,
      },
    },
    {
      name: 'per-node min above max',
      patch: (s) => (dist(s).gpus_per_node = { min: 4, max: 2 }),
      error: { path: `${D}.gpus_per_node.min`, code: 'INVALID_VALUE', message: /greater than max/ },
    },
    {
      name: 'per-node min above the total',
      patch: (s) => (dist(s).gpus_per_node = { min: 8 }),
      error: { path: `${D}.gpus_per_node.min`, code: 'UNSATISFIABLE', message: /has only 4/ },
    },
    {
      name: 'per-node max × max_nodes below the count',
      patch: (s) => Object.assign(dist(s), { gpus_per_node: { max: 1 }, max_nodes: 2 }),
      error: {
        path: `${D}.max_nodes`,
        code: 'UNSATISFIABLE',
        message: /4 GPUs cannot fit: at most 2 nodes × 1 GPUs per node = 2/,
      },
    },
    {
      name: 'pack on one node beyond the per-node max',
      patch: (s) => Object.assign(dist(s), { placement: 'pack', gpus_per_node: { max: 2 }, max_nodes: 1 }),
      error: { path: `${D}.max_nodes`, code: 'UNSATISFIABLE', message: /at most 1 node × 2/ },
    },
    {
      name: 'a CPU gang that cannot fit',
      patch: (s) => (cpuGang(s), Object.assign(dist(s), { ranks_per_node: { max: 1 }, max_nodes: 3 })),
      error: { path: `${D}.max_nodes`, code: 'UNSATISFIABLE', message: /4 ranks cannot fit/ },
    },
    {
      name: 'max_nodes beyond the widest placement is read as it, with a warning',
      patch: (s) => Object.assign(dist(s), { gpus_per_node: { min: 2 }, max_nodes: 16 }),
      check: (spec, warnings) => {
        expect(trainerOf(spec).distributed?.maxNodes).toBe(2);
        expect(warnings).toContainEqual(expect.stringMatching(/max_nodes 16 can never be used.*read as 2/));
      },
    },
    {
      name: 'spread on one node',
      patch: (s) => Object.assign(dist(s), { placement: 'spread', max_nodes: 1 }),
      error: { path: `${D}.placement`, code: 'CONFLICT', message: /max_nodes above 1/ },
    },
    {
      name: 'spread with one rank',
      patch: (s) => Object.assign(gpus(s), { count: 1 }) && (dist(s).placement = 'spread'),
      error: { path: `${D}.placement`, code: 'CONFLICT', message: /more than one rank/ },
    },
    {
      name: 'interconnect on a one-node gang warns',
      patch: (s) => (dist(s).max_nodes = 1),
      check: (_, warnings) =>
        expect(warnings).toContainEqual(expect.stringMatching(/interconnect is ignored/)),
    },
    {
      name: 'a multi-node gang without interconnect warns',
      patch: (s) => Object.assign(dist(s), { gpus_per_node: { max: 2 }, interconnect: undefined }),
      check: (_, warnings) => expect(warnings).toContainEqual(expect.stringMatching(/without interconnect/)),
    },
    {
      name: 'nccl without GPUs',
      patch: (s) => (cpuGang(s), (dist(s).framework = 'nccl')),
      error: { path: `${D}.framework`, code: 'CONFLICT' },
    },
    {
      name: 'nccl on AMD',
      patch: (s) => ((gpus(s).vendor = 'amd'), (dist(s).framework = 'nccl')),
      error: { path: `${D}.framework`, code: 'CONFLICT', message: /NVIDIA-only/ },
    },
    {
      name: 'rendezvous port also declared in ports',
      patch: (s) => (
        (trainer(s).ports = [{ private: 29500 }]),
        (dist(s).gpus_per_node = { max: 1 }),
        (dist(s).max_nodes = 4)
      ),
      error: { path: `${D}.rendezvous_port`, code: 'CONFLICT' },
    },
    {
      name: 'a public port with several ranks per node',
      patch: (s) => (trainer(s).ports = [{ private: 8080, public: 30080 }]),
      error: { path: `${T}.ports`, code: 'CONFLICT', message: /gpus_per_node.max: 1/ },
    },
    {
      name: 'duplicate private port',
      patch: (s) => (trainer(s).ports = [{ private: 8080 }, { private: 8080 }]),
      error: { path: `${T}.ports[1].private`, code: 'DUPLICATE' },
    },
    {
      name: 'the same port over tcp and udp is fine',
      patch: (s) => (trainer(s).ports = [{ private: 8080 }, { private: 8080, protocol: 'udp' }]),
      check: (spec) => expect(trainerOf(spec).ports).toHaveLength(2),
    },
    {
      name: 'duplicate public port',
      patch: (s) => (
        (dist(s).gpus_per_node = { max: 1 }),
        (dist(s).max_nodes = 4),
        (trainer(s).ports = [
          { private: 1, public: 30000 },
          { private: 2, public: 30000 },
        ])
      ),
      error: { path: `${T}.ports[1].public`, code: 'DUPLICATE' },
    },
  ]);
});

describe('failure recovery', () => {
  run([
    {
      name: 'stay_down with restarts',
      patch: (s) => (trainer(s).failure_recovery = { strategy: 'stay_down', max_restarts: 2 }),
      error: { path: `${F}.max_restarts`, code: 'CONFLICT' },
    },
    {
      name: 'a restart strategy with zero restarts',
      patch: (s) => (trainer(s).failure_recovery = { strategy: 'restart_all', max_restarts: 0 }),
      error: { path: `${F}.max_restarts`, code: 'CONFLICT', message: /stay_down/ },
    },
    {
      name: 'restart_failed in a torchrun gang',
      patch: (s) => (trainer(s).failure_recovery = { strategy: 'restart_failed' }),
      error: { path: `${F}.strategy`, code: 'CONFLICT', message: /use restart_all/ },
    },
    {
      name: 'restart_failed in a custom gang',
      patch: (s) => (
        (dist(s).framework = 'custom'),
        (trainer(s).failure_recovery = { strategy: 'restart_failed' })
      ),
      check: (spec) => expect(trainerOf(spec).failureRecovery.strategy).toBe('restart_failed'),
    },
    {
      name: 'a service defaults to restart_failed',
      patch: (s) => (s.allocations.web = service('web')),
      check: (spec) =>
        expect(spec.allocations.find((a) => a.name === 'web')?.failureRecovery).toMatchObject({
          strategy: 'restart_failed',
          maxRestarts: 3,
        }),
    },
    {
      name: 'a gang service defaults to restart_all',
      patch: (s) => (trainer(s).type = 'service'),
      check: (spec) => expect(trainerOf(spec).failureRecovery.strategy).toBe('restart_all'),
    },
    {
      name: 'a service with stay_down warns',
      patch: (s) => (s.allocations.web = { ...service('web'), failure_recovery: { strategy: 'stay_down' } }),
      check: (_, warnings) => expect(warnings).toContainEqual(expect.stringMatching(/not restarted/)),
    },
    {
      name: 'replace_failed_node with stay_down',
      patch: (s) => (trainer(s).failure_recovery = { replace_failed_node: true }),
      error: { path: `${F}.replace_failed_node`, code: 'CONFLICT' },
    },
    {
      name: 'elastic outside a gang',
      patch: (s) =>
        (s.allocations.web = {
          ...service('web'),
          failure_recovery: { strategy: 'restart_all', elastic: { min_nodes: 1 } },
        }),
      error: { path: 'allocations.web.failure_recovery.elastic', code: 'CONFLICT', message: /distributed/ },
    },
    {
      name: 'elastic with mpi',
      patch: (s) => (
        (dist(s).framework = 'mpi'),
        (trainer(s).failure_recovery = { strategy: 'restart_all', elastic: { min_nodes: 1 } })
      ),
      error: { path: `${F}.elastic`, code: 'CONFLICT', message: /mpi cannot change its membership/ },
    },
    {
      name: 'elastic without restart_all',
      patch: (s) => (trainer(s).failure_recovery = { elastic: { min_nodes: 1 } }),
      error: { path: `${F}.strategy`, code: 'CONFLICT', message: /restart_all/ },
    },
    {
      name: 'elastic min above max',
      patch: (s) =>
        (trainer(s).failure_recovery = { strategy: 'restart_all', elastic: { min_nodes: 2, max_nodes: 1 } }),
      error: { path: `${F}.elastic.min_nodes`, code: 'INVALID_VALUE' },
    },
    {
      name: 'elastic max above the gang',
      patch: (s) =>
        (trainer(s).failure_recovery = { strategy: 'restart_all', elastic: { min_nodes: 1, max_nodes: 3 } }),
      error: { path: `${F}.elastic.max_nodes`, code: 'CONFLICT', message: /distributed.max_nodes 2/ },
    },
    {
      name: 'checkpoint_env reserved',
      patch: (s) =>
        (trainer(s).failure_recovery = { strategy: 'restart_all', checkpoint_env: 'GPUNET_CKPT' }),
      error: { path: `${F}.checkpoint_env`, code: 'INVALID_VALUE', message: /set by gpunet/ },
    },
    {
      name: 'checkpoint_env also in env',
      patch: (s) => (
        (trainer(s).execution.env = { CKPT: '/x' }),
        (trainer(s).failure_recovery = { strategy: 'restart_all', checkpoint_env: 'CKPT' })
      ),
      error: { path: `${F}.checkpoint_env`, code: 'CONFLICT' },
    },
  ]);
});

describe('durations, limits and names across the ensemble', () => {
  run([
    {
      name: 'allocation max_duration above the ensemble',
      patch: (s) => (trainer(s).max_duration = '3h'),
      error: {
        path: `${T}.max_duration`,
        code: 'CONFLICT',
        message: /exceeds the ensemble's max_duration 2h/,
      },
    },
    {
      name: 'more than 4096 GPUs in one job',
      patch: (s) => {
        gpus(s).count = 4096;
        dist(s).max_nodes = 4096;
        s.allocations.more = {
          execution: { image: 'x' },
          resources: { cpu: { cores: 1 }, ram: { size: '1GB' }, gpus: { count: 1 } },
        };
      },
      error: { path: 'allocations', code: 'LIMIT_EXCEEDED', message: /4097 GPUs; the limit is 4096/ },
    },
    {
      name: 'exactly 4096 GPUs',
      patch: (s) =>
        Object.assign(dist(s), { gpus_per_node: { min: 8, max: 8 }, max_nodes: 512 }) &&
        (gpus(s).count = 4096),
      check: (spec) =>
        expect(trainerOf(spec).distributed).toMatchObject({
          maxNodes: 512,
          ranksPerNode: { min: 8, max: 8 },
        }),
    },
    {
      name: 'a dns_name, even a duplicate one, is refused until the job network has DNS',
      patch: (s) => (s.allocations.web = { ...service('web'), dns_name: 'trainer' }),
      error: { path: 'allocations.web.dns_name', code: 'NOT_SUPPORTED' },
    },
  ]);
});

describe('nodes and edges', () => {
  const withWeb = (s: Loose): Loose => {
    s.allocations.web = service('web');
    s.allocations.db = service('db');
    return s;
  };
  run([
    {
      name: 'a node names an unknown allocation',
      patch: (s) => (withWeb(s).nodes = { n: { allocations: ['wbe'] } }),
      error: { path: 'nodes.n.allocations[0]', code: 'UNKNOWN_REFERENCE', message: /did you mean 'web'/ },
    },
    {
      name: 'an allocation on two nodes',
      patch: (s) => (withWeb(s).nodes = { a: { allocations: ['web'] }, b: { allocations: ['web'] } }),
      error: { path: 'nodes.b.allocations[0]', code: 'CONFLICT', message: /already on node 'a'/ },
    },
    {
      name: 'an allocation twice on one node',
      patch: (s) => (withWeb(s).nodes = { a: { allocations: ['web', 'web'] } }),
      error: { path: 'nodes.a.allocations[1]', code: 'DUPLICATE' },
    },
    {
      name: 'a multi-node gang pinned to a node',
      patch: (s) => (s.nodes = { a: { allocations: ['trainer'] } }),
      error: { path: 'nodes.a.allocations[0]', code: 'CONFLICT', message: /cannot be pinned to one node/ },
    },
    {
      name: 'a one-node gang pinned to a node',
      patch: (s) => ((dist(s).max_nodes = 1), (s.nodes = { a: { allocations: ['trainer'] } })),
      check: (spec) => expect(spec.nodes[0]?.allocations).toEqual(['trainer']),
    },
    {
      name: 'a node named like an allocation',
      patch: (s) => (withWeb(s).nodes = { web: { allocations: ['web'] } }),
      error: { path: 'nodes.web', code: 'CONFLICT', message: /both a node and an allocation/ },
    },
    {
      // Until public ports are published, each is refused at the allocation (NOT_SUPPORTED), before
      // the node's check for a clash between them.
      name: 'two allocations on one node with the same public port',
      patch: (s) => {
        withWeb(s);
        s.allocations.web.ports = [{ private: 80, public: 30080 }];
        s.allocations.db.ports = [{ private: 81, public: 30080 }];
        s.nodes = { box: { allocations: ['web', 'db'] } };
      },
      error: { path: 'allocations.db.ports[0].public', code: 'NOT_SUPPORTED' },
    },
    {
      name: 'an edge to an unknown name',
      patch: (s) => (withWeb(s).edge_constraints = [{ between: ['web', 'trainr'], max_rtt: '5ms' }]),
      error: {
        path: 'edge_constraints[0].between[1]',
        code: 'UNKNOWN_REFERENCE',
        message: /did you mean 'trainer'/,
      },
    },
    {
      name: 'an edge to itself',
      patch: (s) => (withWeb(s).edge_constraints = [{ between: ['web', 'web'], max_rtt: '5ms' }]),
      error: { path: 'edge_constraints[0].between', code: 'INVALID_VALUE', message: /itself/ },
    },
    {
      name: 'an edge without a requirement',
      patch: (s) => (withWeb(s).edge_constraints = [{ between: ['web', 'db'] }]),
      error: { path: 'edge_constraints[0]', code: 'MISSING_FIELD', message: /max_rtt, min_bandwidth/ },
    },
    {
      name: 'two edges for one pair',
      patch: (s) =>
        (withWeb(s).edge_constraints = [
          { between: ['web', 'db'], max_rtt: '5ms' },
          { between: ['db', 'web'], min_bandwidth: '1Gbps' },
        ]),
      error: { path: 'edge_constraints[1]', code: 'DUPLICATE', message: /merge them/ },
    },
    {
      name: 'an edge inside one node',
      patch: (s) => {
        withWeb(s).nodes = { box: { allocations: ['web', 'db'] } };
        s.edge_constraints = [{ between: ['web', 'db'], max_rtt: '1ms' }];
      },
      error: { path: 'edge_constraints[0].between', code: 'CONFLICT', message: /same node/ },
    },
    {
      name: 'an edge between a node and an allocation',
      patch: (s) => {
        withWeb(s).nodes = { box: { allocations: ['web'] } };
        s.edge_constraints = [{ between: ['trainer', 'box'], min_bandwidth: '10Gbps' }];
      },
      check: (spec) => expect(spec.edgeConstraints[0]?.between).toEqual(['box', 'trainer']),
    },
    {
      name: 'the same location accepted and rejected',
      patch: (s) => (trainer(s).location = { accept: [{ country: 'DE' }], reject: [{ country: 'de' }] }),
      error: { path: `${T}.location.reject`, code: 'CONFLICT' },
    },
  ]);
});

describe('budget across allocations', () => {
  run([
    {
      name: 'a cap below price × GPUs × duration warns',
      patch: (s) => (s.budget = { asset: 'USDC', max_price_per_gpu_hour: '2', max_total: '10' }),
      check: (_, warnings) =>
        expect(warnings).toContainEqual(expect.stringMatching(/max_total 10 USDC is below .* \(16 USDC\)/)),
    },
    {
      name: 'a budget without GPUs warns',
      patch: (s) => (cpuGang(s), (s.budget = { asset: 'USDC', max_price_per_gpu_hour: '2' })),
      check: (_, warnings) =>
        expect(warnings).toContainEqual(expect.stringMatching(/no allocation uses GPUs/)),
    },
  ]);
});
