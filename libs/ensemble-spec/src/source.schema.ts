import semver from 'semver';
import { z } from 'zod';
import { DEFAULT_LIMITS, FIELD_LIMITS } from './limits';
import { isReservedEnv } from './reserved-env';
import {
  BANDWIDTH_PATTERN,
  bareBandwidthHint,
  bareDurationHint,
  bareSizeHint,
  DURATION_PATTERN,
  MONEY_PATTERN,
  parseBandwidth,
  parseDurationUs,
  parseSize,
  SIZE_PATTERN,
} from './units';

/**
 * The source format: what people write. This one schema is the validator *and* the origin of the
 * published JSON Schema (`ensembleSpecJsonSchema()`), so the two can never disagree. Units stay
 * text here (`40GB`); `normalize.ts` turns a valid source into the integer normalized form.
 */

/** Documentation attached to schemas; `ensembleSpecJsonSchema()` and the docs tables read it. */
export interface SpecDocMeta {
  id?: string;
  title?: string;
  description?: string;
  examples?: unknown[];
  /** The NuNet DMS V1 field this corresponds to, for the mapping table in the docs. */
  nunet?: string;
}

export const specDocs = z.registry<SpecDocMeta>();

const doc = <T extends z.ZodType>(
  schema: T,
  description: string,
  extra: Omit<SpecDocMeta, 'description'> = {},
): T => {
  specDocs.add(schema, { description, ...extra });
  return schema;
};

const typeName = (v: unknown): string =>
  v === null
    ? 'null'
    : Array.isArray(v)
      ? 'a list'
      : typeof v === 'object'
        ? 'a map'
        : `${typeof v} ${JSON.stringify(v)}`;

// ---------------------------------------------------------------------------------------------------
// Scalars

export const API_VERSION = 'gpunet.io/v1';
export const KIND = 'Ensemble';

export const DNS_LABEL_PATTERN = '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$';
const DNS_LABEL_RE = new RegExp(DNS_LABEL_PATTERN);
/** A DNS label close to `s` (`Bad_Name` → `bad-name`), or undefined. */
export const toDnsLabel = (s: string): string | undefined => {
  const fixed = s
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  return DNS_LABEL_RE.test(fixed) ? fixed : undefined;
};
const dnsLabel = (what: string) =>
  z.string({ error: (iss) => `${what} must be text, got ${typeName(iss.input)}` }).regex(DNS_LABEL_RE, {
    error: (iss) => {
      const fix = toDnsLabel(String(iss.input));
      return `'${String(iss.input)}' is not a valid ${what}: 1–63 lowercase letters, digits and '-', starting and ending with a letter or digit${fix ? ` — try '${fix}'` : ''}`;
    },
  });

export const ENV_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$';
const envName = () =>
  z
    .string()
    .max(256)
    .regex(new RegExp(ENV_NAME_PATTERN), {
      error: (iss) =>
        `'${String(iss.input)}' is not an environment variable name: letters, digits and '_', not starting with a digit`,
    })
    .refine((name) => !isReservedEnv(name), {
      error: (iss) => `${String(iss.input)} is set by gpunet for each rank and may not be set here`,
    });

const unitString = (
  pattern: string,
  bareHint: (n: unknown) => string,
  parse: (s: string) => { ok: boolean; reason?: string },
) =>
  z
    .string({
      error: (iss) =>
        typeof iss.input === 'number'
          ? bareHint(iss.input)
          : `expected text with a unit, got ${typeName(iss.input)}`,
    })
    .max(64)
    .regex(new RegExp(pattern), {
      error: (iss) => {
        const r = parse(String(iss.input));
        return r.ok ? `invalid value '${String(iss.input)}'` : r.reason!;
      },
    });

const size = (description: string, examples: string[]) =>
  doc(
    unitString(SIZE_PATTERN, bareSizeHint, (s) => parseSize(s)),
    description,
    { examples },
  );
const bandwidth = (description: string, examples: string[]) =>
  doc(
    unitString(BANDWIDTH_PATTERN, bareBandwidthHint, (s) => parseBandwidth(s)),
    description,
    { examples },
  );
const duration = (description: string, examples: string[]) =>
  doc(
    unitString(DURATION_PATTERN, bareDurationHint, (s) => parseDurationUs(s)),
    description,
    { examples },
  );

const boundedInt = (min: number, max: number) =>
  z
    .int({ error: (iss) => `must be a whole number, got ${typeName(iss.input)}` })
    .min(min, { error: (iss) => `must be at least ${min}, got ${String(iss.input)}` })
    .max(max, { error: (iss) => `must be at most ${max}, got ${String(iss.input)}` });

const semverRange = (runtime: string, examples: string[]) =>
  doc(
    z
      .string({
        error: (iss) =>
          `${runtime} must be a version range in quotes, e.g. ">=12.2", got ${typeName(iss.input)}`,
      })
      .min(1)
      .max(256)
      .refine((r) => semver.validRange(r) !== null, {
        error: (iss) =>
          `'${String(iss.input)}' is not a version range — write e.g. ">=12.2", ">=12.2 <13" or "12.x"`,
      })
      .refine((r) => semver.validRange(r) === null || semver.minVersion(r) !== null, {
        error: (iss) => `version range '${String(iss.input)}' matches no version`,
      }),
    `Accepted ${runtime} versions on the host: an npm-style semver range ("${examples[0]}"). A version such as 12.2 reads as 12.2.0.`,
    { examples },
  );

const nameList = <T extends z.ZodType>(item: T, max: number, what: string) =>
  z
    .array(item, { error: (iss) => `${what} must be a list, got ${typeName(iss.input)}` })
    .max(max, { error: `at most ${max} ${what}` });

// ---------------------------------------------------------------------------------------------------
// GPUs

export const GPU_VENDORS = ['nvidia', 'amd', 'any'] as const;
export const PRECISIONS = ['fp64', 'fp32', 'tf32', 'bf16', 'fp16', 'fp8', 'int8'] as const;
export type Precision = (typeof PRECISIONS)[number];

const tflops = (precision: Precision) =>
  doc(
    z
      .number({ error: (iss) => `TFLOPS must be a number, got ${typeName(iss.input)}` })
      .positive({ error: 'TFLOPS must be greater than 0' })
      .max(FIELD_LIMITS.maxTflops, { error: `TFLOPS must be at most ${FIELD_LIMITS.maxTflops}` }),
    precision === 'int8'
      ? 'Minimum measured dense INT8 throughput per GPU, in TOPS.'
      : `Minimum measured dense ${precision.toUpperCase()} throughput per GPU, in TFLOPS (benchmarked by gpunet, not the datasheet).`,
  ).optional();

export const MinTflopsSource = z
  .strictObject(
    Object.fromEntries(PRECISIONS.map((p) => [p, tflops(p)])) as Record<Precision, ReturnType<typeof tflops>>,
  )
  .register(specDocs, {
    id: 'MinTflops',
    title: 'resources.gpus.min_tflops',
    description: 'Minimum measured throughput per GPU, per precision. Every listed precision must be met.',
  });

export const COMPUTE_CAPABILITY_PATTERN = '^[1-9][0-9]?\\.[0-9]$';
export const AMD_ARCH_PATTERN = '^gfx[0-9a-f]{3,4}$';

export const GpusSource = z
  .strictObject(
    {
      count: doc(
        boundedInt(1, FIELD_LIMITS.maxGpusPerAllocation),
        'How many GPUs the allocation needs in total (over all its ranks and nodes).',
        {
          examples: [4, 16],
        },
      ),
      vendor: doc(
        z.enum(GPU_VENDORS).default('any'),
        'GPU vendor. `any` accepts either, but all GPUs of one allocation always share one vendor.',
      ),
      models: doc(
        nameList(z.string().min(1).max(64), FIELD_LIMITS.maxModels, 'models'),
        'Accepted models, any of (case-insensitive, matched as a word sequence in the reported name: "A100" matches "NVIDIA A100-SXM4-80GB"). Empty or absent: any model.',
        { examples: [['A100', 'H100']] },
      ).optional(),
      min_vram: size('Minimum memory per GPU.', ['24GB', '80GiB']).optional(),
      min_compute_capability: doc(
        z.union([
          z.string().regex(new RegExp(COMPUTE_CAPABILITY_PATTERN), {
            error: (iss) => `compute capability '${String(iss.input)}' must look like "8.0" or "9.0"`,
          }),
          z.number(),
        ]),
        'NVIDIA only: minimum CUDA compute capability, "major.minor" ("8.0" = Ampere A100, "9.0" = Hopper).',
        { examples: ['8.0', '9.0'] },
      ).optional(),
      amd_architectures: doc(
        nameList(
          z.string().regex(new RegExp(AMD_ARCH_PATTERN), {
            error: (iss) =>
              `'${String(iss.input)}' is not an AMD GPU architecture — write a gfx target such as "gfx90a" (MI250) or "gfx942" (MI300)`,
          }),
          32,
          'architectures',
        ),
        'AMD only: accepted GPU architectures (LLVM gfx targets), any of.',
        { examples: [['gfx90a', 'gfx942']] },
      ).optional(),
      cuda: semverRange('CUDA', ['>=12.2', '>=12.1 <13']).optional(),
      rocm: semverRange('ROCm', ['>=6.0', '6.x']).optional(),
      min_tflops: MinTflopsSource.optional(),
      mixed_models: doc(
        z
          .boolean({ error: (iss) => `mixed_models is true or false, got ${typeName(iss.input)}` })
          .default(false),
        'Whether one allocation may get different GPU models. Off by default: a gang runs at the pace of its slowest GPU.',
      ),
    },
    {
      error: (iss) =>
        Array.isArray(iss.input)
          ? 'gpus is a map with a count, not one entry per GPU (NuNet V1) — write {count: 2, vendor: nvidia, min_vram: 24GB}'
          : undefined,
    },
  )
  .register(specDocs, {
    id: 'Gpus',
    title: 'resources.gpus',
    description: 'The GPUs an allocation needs. Absent: a CPU-only allocation.',
    nunet: 'resources.gpus[] (one entry per GPU: vendor, model, vram)',
  });

// ---------------------------------------------------------------------------------------------------
// Resources, execution

export const CPU_ARCHITECTURES = ['amd64', 'arm64'] as const;

export const ResourcesSource = z
  .strictObject({
    cpu: z
      .strictObject({
        cores: doc(
          z
            .number({ error: (iss) => `cores must be a number, got ${typeName(iss.input)}` })
            .positive({ error: 'cores must be greater than 0' })
            .max(FIELD_LIMITS.maxCores, { error: `cores must be at most ${FIELD_LIMITS.maxCores}` }),
          'CPU cores per rank; fractions down to a millicore (0.5).',
          { examples: [4, 0.5] },
        ),
        architecture: doc(
          z.enum(CPU_ARCHITECTURES),
          'Required CPU architecture of the host (matters for the image).',
        ).optional(),
      })
      .register(specDocs, {
        id: 'Cpu',
        title: 'resources.cpu',
        description: 'CPU per rank.',
        nunet: 'resources.cpu.cores',
      }),
    ram: z.strictObject({ size: size('Memory per rank.', ['32GiB']) }).register(specDocs, {
      id: 'Ram',
      title: 'resources.ram',
      description: 'Memory per rank.',
      nunet: 'resources.ram.size (GB)',
    }),
    disk: z
      .strictObject({
        size: size('Scratch disk per rank. Not supported yet: refused (NOT_SUPPORTED).', ['100GB']),
      })
      .register(specDocs, {
        id: 'Disk',
        title: 'resources.disk',
        description: 'Scratch disk per rank. Not supported yet: refused (NOT_SUPPORTED).',
        nunet: 'resources.disk.size (GB)',
      })
      .optional(),
    gpus: GpusSource.optional(),
  })
  .register(specDocs, {
    id: 'Resources',
    title: 'resources',
    description:
      'What each rank (one container or process) needs, except `gpus.count`, which is the total for the allocation.',
    nunet: 'resources',
  });

const argList = (what: string) =>
  nameList(z.string().max(FIELD_LIMITS.maxArgLength), FIELD_LIMITS.maxArgs, `${what} arguments`);

export const ExecutionSource = z
  .strictObject({
    image: doc(z.string().min(1).max(512), 'Container image (docker executor only).', {
      examples: ['nvcr.io/nvidia/pytorch:24.05-py3'],
    }).optional(),
    cmd: doc(argList('cmd'), 'Command and arguments, as a list (no shell).', {
      examples: [['python', 'train.py']],
    }).optional(),
    entrypoint: doc(argList('entrypoint'), "Overrides the image's entrypoint.").optional(),
    env: doc(
      z.record(
        envName(),
        z
          .string({
            error: (iss) =>
              iss.input === undefined
                ? undefined
                : `environment values are text — quote it: "${String(iss.input as string)}"`,
          })
          .max(FIELD_LIMITS.maxEnvValueLength),
        {
          error: (iss) =>
            Array.isArray(iss.input)
              ? 'env is a map of NAME: value, not a list of NAME=VALUE strings (NuNet V1 `environment`)'
              : undefined,
        },
      ),
      'Environment variables. gpunet sets the rendezvous variables (RANK, WORLD_SIZE, MASTER_ADDR, …) itself; they may not be set here.',
      { nunet: 'execution.environment (KEY=VALUE list)' },
    ).optional(),
    working_dir: doc(z.string().min(1).max(4096), 'Working directory of each rank.', {
      nunet: 'execution.working_directory',
    }).optional(),
  })
  .register(specDocs, {
    id: 'Execution',
    title: 'execution',
    description: 'What each rank runs.',
    nunet: 'execution (type, image, cmd, entrypoint, environment, working_directory)',
  });

// ---------------------------------------------------------------------------------------------------
// Distributed

export const FRAMEWORKS = ['torchrun', 'horovod', 'mpi', 'nccl', 'custom'] as const;
export const PLACEMENTS = ['pack', 'spread', 'any'] as const;

const perNode = (unit: string, id: string) =>
  z
    .strictObject({
      min: doc(boundedInt(1, FIELD_LIMITS.maxRanks), `Fewest ${unit} on any node used.`).optional(),
      max: doc(boundedInt(1, FIELD_LIMITS.maxRanks), `Most ${unit} on any node.`).optional(),
    })
    .register(specDocs, {
      id,
      title: `distributed.${unit}_per_node`,
      description: `Bounds on ${unit} per node.`,
    });

export const InterconnectSource = z
  .strictObject({
    min_bandwidth: bandwidth('Minimum measured bandwidth between any two nodes of the gang.', [
      '100Gbps',
      '10Gbps',
    ]).optional(),
    max_rtt: duration('Maximum measured round-trip time between any two nodes of the gang.', [
      '2ms',
      '500us',
    ]).optional(),
    same_site: doc(
      z.boolean({ error: (iss) => `same_site is true or false, got ${typeName(iss.input)}` }).default(false),
      'All nodes must be at one site (one provider-declared data centre or LAN).',
    ),
  })
  .register(specDocs, {
    id: 'Interconnect',
    title: 'distributed.interconnect',
    description: 'Network the gang needs between its nodes; ignored when the gang fits on one node.',
  });

export const DistributedSource = z
  .strictObject({
    framework: doc(
      z.enum(FRAMEWORKS),
      'How ranks meet: the launcher whose environment each rank gets (torchrun: RANK/WORLD_SIZE/MASTER_ADDR; horovod/mpi: a hostfile; nccl: the NCCL variables; custom: all of them).',
    ),
    ranks: doc(
      boundedInt(1, FIELD_LIMITS.maxRanks),
      'Number of ranks (processes). With GPUs it is count / gpus_per_rank and may be omitted; CPU-only gangs must set it.',
    ).optional(),
    gpus_per_rank: doc(
      boundedInt(1, 64),
      'GPUs each rank sees. Default 1 when the allocation has GPUs.',
    ).optional(),
    gpus_per_node: perNode('gpus', 'GpusPerNode').optional(),
    ranks_per_node: perNode('ranks', 'RanksPerNode').optional(),
    max_nodes: doc(
      boundedInt(1, FIELD_LIMITS.maxNodesPerGang),
      'Most machines the gang may span. Default: one per rank.',
    ).optional(),
    placement: doc(
      z.enum(PLACEMENTS).default('pack'),
      'pack: as few nodes as possible (then one site, then low-latency neighbours); spread: as many nodes as allowed (e.g. federated learning); any: cheapest.',
    ),
    interconnect: InterconnectSource.optional(),
    rendezvous_port: doc(
      boundedInt(1024, 65535),
      'Port rank 0 listens on for rendezvous (MASTER_PORT), on the job network.',
    ).default(29500),
  })
  .register(specDocs, {
    id: 'Distributed',
    title: 'distributed',
    description: 'Makes the allocation an all-or-nothing gang of ranks that may span several machines.',
    nunet: '(none: one allocation per node, coordinated by hand)',
  });

// ---------------------------------------------------------------------------------------------------
// Failure recovery

export const RECOVERY_STRATEGIES = ['stay_down', 'restart_all', 'restart_failed'] as const;

export const FailureRecoverySource = z
  .strictObject(
    {
      strategy: doc(
        z.enum(RECOVERY_STRATEGIES, {
          error: (iss) => {
            const nunet: Record<string, string> = {
              one_for_all: 'restart_all',
              one_for_one: 'restart_failed',
              rest_for_one: 'restart_all',
              restart: 'restart_failed',
              redeploy: 'restart_all',
            };
            const fix = nunet[String(iss.input)];
            return fix === undefined
              ? `strategy must be one of ${RECOVERY_STRATEGIES.join(', ')}`
              : `'${String(iss.input)}' is NuNet V1 vocabulary — use '${fix}'`;
          },
        }),
        'stay_down: a failure fails the job; restart_all: restart every rank together (what a gang needs); restart_failed: restart only the failed one. Default: stay_down for a task; for a service restart_failed, or restart_all when it is a gang.',
        { nunet: 'failure_recovery: stay_down | one_for_all | one_for_one' },
      ).optional(),
      max_restarts: doc(
        boundedInt(0, FIELD_LIMITS.maxRestarts),
        'Restarts before the job fails. Default 3 when restarting, 0 with stay_down.',
      ).optional(),
      replace_failed_node: doc(
        z.boolean().default(false),
        'On a restart, move the ranks of a node that failed (or vanished) to a new node instead of waiting for it. Not supported yet: true is refused (NOT_SUPPORTED).',
      ),
      elastic: z
        .strictObject({
          min_nodes: doc(
            boundedInt(1, FIELD_LIMITS.maxNodesPerGang),
            'Fewest nodes the job keeps running on.',
          ),
          max_nodes: doc(
            boundedInt(1, FIELD_LIMITS.maxNodesPerGang),
            'Most nodes the job may grow back to. Default: distributed.max_nodes.',
          ).optional(),
        })
        .register(specDocs, {
          id: 'Elastic',
          title: 'failure_recovery.elastic',
          description:
            'Keep running on fewer nodes after a loss (torchrun --nnodes=MIN:MAX, horovod elastic). Not supported yet: refused (NOT_SUPPORTED).',
        })
        .optional(),
      checkpoint_env: doc(
        envName(),
        'Name of the environment variable in which gpunet passes the checkpoint directory that survives restarts. Not supported yet: refused (NOT_SUPPORTED).',
        { examples: ['CHECKPOINT_DIR'] },
      ).optional(),
      progress_timeout: duration(
        'A rank that prints nothing (stdout or stderr) for this long is hung — stuck in a collective, deadlocked — and is stopped by its edge; the recovery strategy then decides (RANK_HUNG). At least 1s. Default: none (a silent rank runs until max_duration).',
        ['10m', '90s'],
      ).optional(),
    },
    {
      error: (iss) =>
        typeof iss.input === 'string'
          ? `failure_recovery is a map — write {strategy: ${iss.input === 'one_for_all' ? 'restart_all' : 'stay_down'}} (NuNet V1 used a bare string)`
          : undefined,
    },
  )
  .register(specDocs, {
    id: 'FailureRecovery',
    title: 'failure_recovery',
    description: 'What happens when a rank or a node fails.',
    nunet: 'failure_recovery',
  });

// ---------------------------------------------------------------------------------------------------
// Location, ports

export const CONTINENTS = ['AF', 'AN', 'AS', 'EU', 'NA', 'OC', 'SA'] as const;
export const CONTINENT_NAMES: Record<string, (typeof CONTINENTS)[number]> = {
  africa: 'AF',
  antarctica: 'AN',
  asia: 'AS',
  europe: 'EU',
  'north america': 'NA',
  northamerica: 'NA',
  oceania: 'OC',
  australia: 'OC',
  'south america': 'SA',
  southamerica: 'SA',
};

export const LocationMatchSource = z
  .strictObject({
    continent: doc(
      z
        .string()
        .min(2)
        .max(32)
        .refine(
          (c) =>
            (CONTINENTS as readonly string[]).includes(c.toUpperCase()) || c.toLowerCase() in CONTINENT_NAMES,
          {
            error: (iss) =>
              `unknown continent '${String(iss.input)}' — write one of ${CONTINENTS.join(', ')} (or its name, e.g. Europe)`,
          },
        ),
      'Continent code (AF, AN, AS, EU, NA, OC, SA) or name.',
    ).optional(),
    country: doc(
      z.string().regex(/^[A-Za-z]{2}$/, {
        error: (iss) => `country '${String(iss.input)}' must be an ISO 3166-1 alpha-2 code such as DE or US`,
      }),
      'ISO 3166-1 alpha-2 country code.',
    ).optional(),
    city: doc(z.string().min(1).max(128), 'City name as the provider declares it.').optional(),
    asn: doc(
      z.union([
        z.int().min(1).max(4_294_967_295),
        z.string().regex(/^(AS|as)?[1-9][0-9]{0,9}$/, {
          error: (iss) => `asn '${String(iss.input)}' must be a number such as 13335 or "AS13335"`,
        }),
      ]),
      'Autonomous system number of the host network. Not supported yet: refused (NOT_SUPPORTED).',
    ).optional(),
    isp: doc(
      z.string().min(1).max(128),
      'Internet provider name. Not supported yet: refused (NOT_SUPPORTED).',
    ).optional(),
  })
  .register(specDocs, {
    id: 'LocationMatch',
    title: 'location entry',
    description: 'Matches a host when every field given matches.',
    nunet: 'location.accept/reject entries (continent, country, city, asn, isp)',
  });

export const LocationSource = z
  .strictObject({
    accept: doc(
      nameList(LocationMatchSource, FIELD_LIMITS.maxLocations, 'location entries'),
      'Hosts must match one of these (absent: anywhere).',
    ).optional(),
    reject: doc(
      nameList(LocationMatchSource, FIELD_LIMITS.maxLocations, 'location entries'),
      'Hosts must match none of these.',
    ).optional(),
  })
  .register(specDocs, {
    id: 'Location',
    title: 'location',
    description: 'Where hosts may be.',
    nunet: 'nodes.<n>.location',
  });

export const PortSource = z
  .strictObject({
    private: doc(boundedInt(1, 65535), 'Port the rank listens on.'),
    public: doc(
      boundedInt(1025, 65535),
      "Port exposed on the host's public address. Absent: reachable on the job network only. Not supported yet: refused (NOT_SUPPORTED).",
    ).optional(),
    protocol: doc(z.enum(['tcp', 'udp']).default('tcp'), 'Transport protocol.'),
  })
  .register(specDocs, {
    id: 'Port',
    title: 'ports[]',
    description: 'A port a rank serves.',
    nunet: 'nodes.<n>.ports[] {public, private, allocation}',
  });

// ---------------------------------------------------------------------------------------------------
// Allocation, node, edge constraint, budget, top level

export const ALLOCATION_TYPES = ['task', 'service'] as const;
export const EXECUTORS = ['docker', 'process'] as const;

export const AllocationSource = z
  .strictObject({
    type: doc(
      z.enum(ALLOCATION_TYPES).default('task'),
      'task: done when its ranks exit; service: long-running, restarted per failure_recovery.',
      { nunet: 'type' },
    ),
    executor: doc(
      z.enum(EXECUTORS).default('docker'),
      'docker: a sandboxed container; process: a plain process (development and CI providers only).',
      { nunet: 'executor' },
    ),
    execution: ExecutionSource,
    resources: ResourcesSource,
    distributed: DistributedSource.optional(),
    failure_recovery: FailureRecoverySource.optional(),
    max_duration: duration(
      'Wall-clock limit for this allocation; at most the ensemble max_duration (the default).',
      ['2h'],
    ).optional(),
    dns_name: doc(
      dnsLabel('dns_name'),
      'Name on the job network (`<dns_name>.internal`). Default: the allocation name. Not supported yet: refused (NOT_SUPPORTED).',
      { nunet: 'dns_name' },
    ).optional(),
    ports: doc(nameList(PortSource, FIELD_LIMITS.maxPorts, 'ports'), 'Ports each rank serves.').optional(),
    location: LocationSource.optional(),
  })
  .register(specDocs, {
    id: 'Allocation',
    title: 'allocations.<name>',
    description: 'One workload: a single container or process, or — with `distributed` — a gang of ranks.',
    nunet: 'allocations.<name>',
  });

export const NodeSource = z
  .strictObject({
    allocations: doc(
      nameList(dnsLabel('allocation name'), 64, 'allocations').min(1, {
        error: 'a node hosts at least one allocation',
      }),
      'Allocations that must share this one machine.',
    ),
    peer: doc(z.string().min(1).max(256), 'Pin the node to this provider (its edge id).').optional(),
    location: LocationSource.optional(),
  })
  .register(specDocs, {
    id: 'Node',
    title: 'nodes.<name>',
    description:
      'A named machine: co-locates allocations, pins them to a provider or constrains where it is.',
    nunet: 'nodes.<name>',
  });

export const EdgeConstraintSource = z
  .strictObject({
    between: doc(
      z.tuple([dnsLabel('node name'), dnsLabel('node name')], {
        error: (iss) =>
          Array.isArray(iss.input)
            ? 'between names exactly two nodes or allocations'
            : `between must be a list of two names, got ${typeName(iss.input)}`,
      }),
      'Two node names or allocation names (an allocation stands for every machine it runs on).',
      { nunet: 'edges' },
    ),
    max_rtt: duration('Maximum measured round-trip time.', ['30ms']).optional(),
    min_bandwidth: bandwidth('Minimum measured bandwidth.', ['1Gbps']).optional(),
  })
  .register(specDocs, {
    id: 'EdgeConstraint',
    title: 'edge_constraints[]',
    description: 'A network requirement between two named nodes or allocations.',
    nunet: 'edge_constraints[] {edges, rtt (ms), bw (bits/s)}',
  });

export const BudgetSource = z
  .strictObject({
    asset: doc(
      z.string().regex(/^[A-Z][A-Z0-9]{1,11}$/, {
        error: (iss) => `asset '${String(iss.input)}' must be an upper-case code such as USDC`,
      }),
      'Currency code of the prices.',
      { examples: ['USDC'] },
    ),
    decimals: doc(
      boundedInt(0, FIELD_LIMITS.maxDecimals),
      "The asset's minor-unit precision. Optional for well-known assets (USDC 6, USD 2, …).",
    ).optional(),
    max_price_per_gpu_hour: doc(
      z.union(
        [
          z
            .string()
            .max(FIELD_LIMITS.maxMoneyDigits)
            .regex(new RegExp(MONEY_PATTERN), {
              error: (iss) => `invalid amount '${String(iss.input)}' — write a decimal such as "2.50"`,
            }),
          z.int().min(0),
        ],
        {
          error: (iss) =>
            typeof iss.input === 'number'
              ? `write money as a quoted decimal — "${iss.input}" — floats lose precision`
              : undefined,
        },
      ),
      'Highest price accepted per GPU-hour, as a decimal string ("2.50"). Never a float.',
      { examples: ['2.50'] },
    ),
    max_total: doc(
      z.union(
        [
          z
            .string()
            .max(FIELD_LIMITS.maxMoneyDigits)
            .regex(new RegExp(MONEY_PATTERN), {
              error: (iss) => `invalid amount '${String(iss.input)}' — write a decimal such as "500"`,
            }),
          z.int().min(0),
        ],
        {
          error: (iss) =>
            typeof iss.input === 'number'
              ? `write money as a quoted decimal — "${iss.input}" — floats lose precision`
              : undefined,
        },
      ),
      'Cap on the whole job. Default: price × GPUs × max_duration.',
    ).optional(),
  })
  .register(specDocs, {
    id: 'Budget',
    title: 'budget',
    description: 'What the orchestrator will pay; settlement holds price × GPUs × max_duration in escrow.',
  });

export const MetadataSource = z
  .strictObject({
    name: doc(dnsLabel('metadata.name'), 'Job name.'),
    description: doc(z.string().max(1024), 'Free text.').optional(),
    labels: doc(
      z.record(
        z
          .string()
          .max(128)
          .regex(/^[A-Za-z0-9]([A-Za-z0-9._/-]*[A-Za-z0-9])?$/, {
            error: (iss) => `label key '${String(iss.input)}' may hold letters, digits, '.', '_', '/', '-'`,
          }),
        z.string().max(256),
      ),
      'Filterable key/value pairs.',
      { nunet: 'metadata' },
    ).optional(),
  })
  .register(specDocs, { id: 'Metadata', title: 'metadata', description: 'Names the job.' });

export const EnsembleSpecSourceSchema = z
  .strictObject({
    apiVersion: doc(
      z.literal(API_VERSION, {
        error: (iss) =>
          iss.input === undefined
            ? undefined
            : iss.input === 'V1'
              ? `NuNet V1's version: "V1" is apiVersion: "${API_VERSION}" here`
              : `must be "${API_VERSION}" (this library reads version 1 of the format), got ${typeName(iss.input)}`,
      }),
      'Format version.',
      { nunet: 'version: "V1"' },
    ),
    kind: doc(
      z.literal(KIND, {
        error: (iss) =>
          iss.input === undefined ? undefined : `must be "${KIND}", got ${typeName(iss.input)}`,
      }),
      'Document kind.',
    ),
    metadata: MetadataSource,
    max_duration: duration('Wall-clock limit for the whole job; budgets and escrow are computed from it.', [
      '2h',
      '30d',
    ]),
    subnet: doc(dnsLabel('subnet'), 'Run only inside this subnet, at its prices and rules.').optional(),
    budget: BudgetSource.optional(),
    allocations: doc(
      z.record(dnsLabel('allocation name'), AllocationSource, {
        error: (iss) =>
          Array.isArray(iss.input) ? 'allocations is a map of name: allocation, not a list' : undefined,
      }),
      `Named allocations (at most ${DEFAULT_LIMITS.maxAllocations}).`,
      { nunet: 'allocations' },
    ),
    nodes: doc(z.record(dnsLabel('node name'), NodeSource), 'Named machines.', { nunet: 'nodes' }).optional(),
    edge_constraints: doc(
      nameList(EdgeConstraintSource, DEFAULT_LIMITS.maxEdgeConstraints, 'edge constraints'),
      'Network requirements between named nodes or allocations.',
      { nunet: 'edge_constraints' },
    ).optional(),
  })
  .register(specDocs, {
    id: 'EnsembleSpec',
    title: 'gpunet ensemble spec',
    description: 'A job: one or more allocations (gangs of GPUs, services) and where and how they may run.',
  });

/** A spec as written, after validation and defaults (units still text). */
export type EnsembleSpecSource = z.output<typeof EnsembleSpecSourceSchema>;
/** A spec as a person may write it. */
export type EnsembleSpecInput = z.input<typeof EnsembleSpecSourceSchema>;
export type AllocationSourceSpec = z.output<typeof AllocationSource>;
