import { type AvailabilityWindow, modelWords, toIssues, type ValidationIssue } from '@gpunet/contracts';
import { KNOWN_ASSET_DECIMALS, parseDurationMs, parseMoney, parseSize } from '@gpunet/ensemble-spec';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

const Size = z.string().max(32);
const DEFAULT_WORKSPACE_PER_RANK = '50GiB';
const MiB = 1024 ** 2;
/** Bounds of `disk.workspace_per_rank`: ext4 needs a few MiB for itself; 16 TiB is ext4's largest file. */
export const WORKSPACE_BYTES_BOUNDS = { min: 16 * MiB, max: 16 * 1024 ** 4 } as const;

/**
 * Top-level keys a provider might write for network access that no runtime honours yet: they are
 * refused (NOT_SUPPORTED) rather than accepted and ignored, so no provider believes a rank may reach
 * the internet, or is kept from it, because of a key.
 */
export const UNSUPPORTED_POLICY_KEYS = ['network', 'egress', 'internet'] as const;
const NOT_SUPPORTED_NETWORK =
  "NOT_SUPPORTED: no policy key opens or configures a rank's network yet. A docker rank reaches " +
  "its job's overlay peers and nothing else (not the internet, not this host's LAN or services); " +
  'remove this key';
const Amount = z.string().max(40);
const Day = z.enum(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']);
const Time = z.string().regex(/^([01][0-9]|2[0-3]):[0-5][0-9]$/, 'must be HH:MM (24 h)');

/** OCI runtimes a provider may run rank containers with (policy `sandbox.runtime`). */
export const SANDBOX_RUNTIMES = ['runc', 'runsc'] as const;
export type SandboxRuntime = (typeof SANDBOX_RUNTIMES)[number];

/** The provider policy file as the provider writes it (YAML, snake_case like ensemble specs). */
export const PolicySourceSchema = z.strictObject({
  version: z.literal(1, { error: 'must be 1' }),
  /** A name for people (the dashboard, logs). */
  name: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z0-9][A-Za-z0-9 ._-]*$/, 'letters, digits, space . _ -'),
  gpus: z.strictObject({
    /** `all`, or the GPUs to share by index (`0`, or `nvidia:0` / `amd:0` on mixed hosts) or UUID. */
    share: z.union([
      z.literal('all'),
      z
        .array(z.union([z.int().min(0).max(1023), z.string().min(1).max(128)]))
        .min(1)
        .max(64),
    ]),
    max_per_job: z.int().min(1).max(64),
  }),
  cpu: z.strictObject({
    /** Cores kept for the owner; jobs share the rest. Default 1. */
    reserve_cores: z.number().min(0).max(4096).default(1),
  }),
  memory: z.strictObject({
    /** Memory kept for the owner (`16GiB`). */
    reserve: Size,
  }),
  images: z.strictObject({
    /** Image prefixes jobs may use (`nvcr.io/nvidia/`); `"*"` allows any image. */
    allow: z.array(z.string().min(1).max(256)).min(1).max(64),
  }),
  pricing: z.strictObject({
    asset: z.string().regex(/^[A-Z][A-Z0-9]{1,15}$/, 'an asset code like USDC'),
    /** Decimal places of the asset; default: known for USDC, USDT, NTX, …. */
    decimals: z.int().min(0).max(18).optional(),
    /** Floors per GPU-hour, first match wins: `{model: H100, per_gpu_hour: "2.50"}`. */
    floors: z
      .array(z.strictObject({ model: z.string().min(1).max(64), per_gpu_hour: Amount }))
      .max(64)
      .default([]),
    /** Floor for models no entry names; absent: no floor for them. */
    default_per_gpu_hour: Amount.optional(),
  }),
  subnets: z
    .array(z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'lower-case letters, digits and -'))
    .min(1)
    .max(32),
  availability: z
    .strictObject({
      /** IANA time zone of the windows (`Europe/Berlin`). Default UTC. */
      time_zone: z.string().min(1).max(64).default('UTC'),
      windows: z
        .array(
          z.strictObject({
            days: z.array(Day).min(1).max(7),
            from: Time,
            /** `24:00` = end of day; earlier than `from` = crosses midnight. */
            to: z.union([Time, z.literal('24:00')]),
          }),
        )
        .min(1)
        .max(32),
    })
    .optional(),
  jobs: z
    .strictObject({
      /** Longest job accepted (`24h`); absent: no limit. */
      max_duration: z.string().max(32).optional(),
    })
    .default({}),
  disk: z
    .strictObject({
      /**
       * Disk each rank may write in its workspace (`50GiB`, or bytes). Default 50GiB. The docker
       * runtime enforces it (a file system of that size per rank); the process runtime cannot.
       * `unlimited`: no quota, the workspace is a directory of the host's disk (edges that cannot
       * loop-mount: not root, no loop devices).
       */
      workspace_per_rank: z
        .union([z.literal('unlimited'), Size, z.int()])
        .default(DEFAULT_WORKSPACE_PER_RANK),
    })
    .default({ workspace_per_rank: DEFAULT_WORKSPACE_PER_RANK }),
  location: z
    .strictObject({
      continent: z.enum(['AF', 'AN', 'AS', 'EU', 'NA', 'OC', 'SA']).optional(),
      country: z
        .string()
        .regex(/^[A-Z]{2}$/, 'ISO 3166-1 alpha-2, upper case')
        .optional(),
      city: z.string().min(1).max(128).optional(),
    })
    .default({}),
  sandbox: z
    .strictObject({
      /**
       * The OCI runtime of rank containers (docker runtime): `runc`, Docker's default, or `runsc`
       * (gVisor: the rank's system calls go to gVisor's user-space kernel, not the host's; CPU ranks
       * only, since the packaged runsc cannot give a container a GPU). Default `runc`.
       */
      runtime: z.enum(SANDBOX_RUNTIMES, { error: 'runc or runsc' }).default('runc'),
    })
    .default({ runtime: 'runc' }),
});
export type PolicySource = z.infer<typeof PolicySourceSchema>;

/** A GPU the policy shares, as written. */
export type ShareSelector =
  | {
      readonly by: 'index';
      readonly vendor: 'nvidia' | 'amd' | null;
      readonly index: number;
      readonly path: string;
    }
  | { readonly by: 'uuid'; readonly uuid: string; readonly path: string };

export interface PriceFloor {
  readonly model: string;
  readonly perGpuHourMinor: bigint;
}

/** A validated policy, every quantity in base units. */
export interface Policy {
  readonly name: string;
  readonly share: 'all' | readonly ShareSelector[];
  readonly maxGpusPerJob: number;
  readonly reserveCpuMillicores: number;
  readonly reserveMemoryBytes: number;
  readonly images: readonly string[];
  readonly pricing: {
    readonly asset: string;
    readonly decimals: number;
    readonly floors: readonly PriceFloor[];
    readonly defaultMinor: bigint | null;
  };
  readonly subnets: readonly string[];
  readonly availability: {
    readonly timeZone: string;
    readonly windows: readonly AvailabilityWindow[];
  } | null;
  readonly maxJobDurationMs: number | null;
  /**
   * `disk.workspace_per_rank` in bytes: the size of each rank's workspace file system (docker
   * runtime); null: `unlimited`.
   */
  readonly workspaceBytesPerRank: number | null;
  readonly location: {
    readonly continent: 'AF' | 'AN' | 'AS' | 'EU' | 'NA' | 'OC' | 'SA' | null;
    readonly country: string | null;
    readonly city: string | null;
  };
  /** Policy `sandbox.runtime`: the OCI runtime of rank containers. */
  readonly sandboxRuntime: SandboxRuntime;
}

export type PolicyResult =
  | { readonly ok: true; readonly policy: Policy }
  | { readonly ok: false; readonly issues: readonly ValidationIssue[] };

const validTimeZone = (zone: string): boolean => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
};

/**
 * Parses and validates a policy file. Every problem is reported at once with its field path
 * (`pricing.floors[1].per_gpu_hour: …`); nothing throws.
 */
export const parsePolicy = (text: string): PolicyResult => {
  let raw: unknown;
  try {
    raw = parseYaml(text, { maxAliasCount: 100, logLevel: 'error' });
  } catch (e) {
    return {
      ok: false,
      issues: [{ path: '', message: `not YAML: ${e instanceof Error ? e.message : String(e)}` }],
    };
  }
  if (raw === null || raw === undefined)
    return { ok: false, issues: [{ path: '', message: 'the policy file is empty' }] };
  // Named NOT_SUPPORTED with the reason, instead of zod's bare "unrecognized key".
  const unsupported: ValidationIssue[] = [];
  if (typeof raw === 'object' && !Array.isArray(raw)) {
    const rest = { ...(raw as Record<string, unknown>) };
    for (const key of UNSUPPORTED_POLICY_KEYS)
      if (key in rest) {
        unsupported.push({ path: key, message: NOT_SUPPORTED_NETWORK });
        delete rest[key];
      }
    raw = rest;
  }
  const parsed = PolicySourceSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, issues: [...unsupported, ...toIssues(parsed.error)] };
  const resolved = resolvePolicy(parsed.data);
  if (unsupported.length === 0) return resolved;
  return { ok: false, issues: [...unsupported, ...(resolved.ok ? [] : resolved.issues)] };
};

const workspaceBytesOf = (value: string | number, issues: ValidationIssue[]): number | null => {
  const path = 'disk.workspace_per_rank';
  if (value === 'unlimited') return null;
  let bytes: number;
  if (typeof value === 'number') bytes = value;
  else {
    const size = parseSize(value);
    if (!size.ok) {
      issues.push({ path, message: size.reason });
      return 0;
    }
    bytes = size.value;
  }
  const { min, max } = WORKSPACE_BYTES_BOUNDS;
  if (bytes < min || bytes > max)
    issues.push({ path, message: `must be between 16MiB and 16TiB (${min}…${max} bytes), not ${value}` });
  return bytes;
};

const resolvePolicy = (src: PolicySource): PolicyResult => {
  const issues: ValidationIssue[] = [];
  const memory = parseSize(src.memory.reserve);
  if (!memory.ok) issues.push({ path: 'memory.reserve', message: memory.reason });
  const decimals = src.pricing.decimals ?? KNOWN_ASSET_DECIMALS[src.pricing.asset];
  if (decimals === undefined)
    issues.push({ path: 'pricing.decimals', message: `say how many decimals ${src.pricing.asset} has` });
  const money = (text: string, path: string): bigint | null => {
    if (decimals === undefined) return null;
    const r = parseMoney(text, decimals);
    if (!r.ok) {
      issues.push({ path, message: r.reason });
      return null;
    }
    return r.value;
  };
  const floors: PriceFloor[] = [];
  src.pricing.floors.forEach((f, i) => {
    const minor = money(f.per_gpu_hour, `pricing.floors[${i}].per_gpu_hour`);
    if (modelWords(f.model) === '')
      issues.push({ path: `pricing.floors[${i}].model`, message: 'names no model' });
    if (minor !== null) floors.push({ model: modelWords(f.model), perGpuHourMinor: minor });
  });
  const defaultMinor =
    src.pricing.default_per_gpu_hour === undefined
      ? null
      : money(src.pricing.default_per_gpu_hour, 'pricing.default_per_gpu_hour');
  let maxJobDurationMs: number | null = null;
  if (src.jobs.max_duration !== undefined) {
    const d = parseDurationMs(src.jobs.max_duration);
    if (!d.ok) issues.push({ path: 'jobs.max_duration', message: d.reason });
    else if (d.value < 1) issues.push({ path: 'jobs.max_duration', message: 'must be positive' });
    else maxJobDurationMs = d.value;
  }
  const workspaceBytes = workspaceBytesOf(src.disk.workspace_per_rank, issues);
  if (src.availability && !validTimeZone(src.availability.time_zone))
    issues.push({
      path: 'availability.time_zone',
      message: `unknown time zone ${src.availability.time_zone}`,
    });
  src.availability?.windows.forEach((w, i) => {
    if (w.from === w.to)
      issues.push({ path: `availability.windows[${i}]`, message: 'from and to are equal: an empty window' });
    if (new Set(w.days).size !== w.days.length)
      issues.push({ path: `availability.windows[${i}].days`, message: 'a day is listed twice' });
  });
  const share: 'all' | ShareSelector[] =
    src.gpus.share === 'all'
      ? 'all'
      : src.gpus.share.flatMap((s, i): ShareSelector[] => {
          const path = `gpus.share[${i}]`;
          if (typeof s === 'number') return [{ by: 'index', vendor: null, index: s, path }];
          const vendorIndex = /^(nvidia|amd):([0-9]{1,4})$/.exec(s);
          if (vendorIndex)
            return [
              {
                by: 'index',
                vendor: vendorIndex[1] as 'nvidia' | 'amd',
                index: Number(vendorIndex[2]),
                path,
              },
            ];
          if (/^[0-9]+$/.test(s)) return [{ by: 'index', vendor: null, index: Number(s), path }];
          if (!/^[A-Za-z0-9][A-Za-z0-9:._-]{0,127}$/.test(s)) {
            issues.push({ path, message: 'a GPU index, vendor:index (nvidia:0) or a GPU UUID' });
            return [];
          }
          return [{ by: 'uuid', uuid: s, path }];
        });
  const images = src.images.allow;
  images.forEach((p, i) => {
    if (p !== '*' && /[\s*]/.test(p))
      issues.push({ path: `images.allow[${i}]`, message: 'an image prefix (nvcr.io/nvidia/) or "*" alone' });
  });
  if (issues.length > 0) return { ok: false, issues };
  return {
    ok: true,
    policy: {
      name: src.name,
      share,
      maxGpusPerJob: src.gpus.max_per_job,
      reserveCpuMillicores: Math.round(src.cpu.reserve_cores * 1000),
      reserveMemoryBytes: memory.ok ? memory.value : 0,
      images,
      pricing: { asset: src.pricing.asset, decimals: decimals!, floors, defaultMinor },
      subnets: [...new Set(src.subnets)].sort(),
      availability: src.availability
        ? { timeZone: src.availability.time_zone, windows: src.availability.windows }
        : null,
      maxJobDurationMs,
      workspaceBytesPerRank: workspaceBytes,
      location: {
        continent: src.location.continent ?? null,
        country: src.location.country ?? null,
        city: src.location.city ?? null,
      },
      sandboxRuntime: src.sandbox.runtime,
    },
  };
};

/** The template `gpunet edge init` writes: every field, commented. */
export const POLICY_TEMPLATE = `# gpunet provider policy — what this machine shares. See docs/provider-guide.md.
# The edge validates this file at start (errors name the field) and re-checks it on every reservation.
version: 1
name: my-gpu-host

gpus:
  # "all", or a list of GPU indices (0), vendor:index (nvidia:0, amd:1) or UUIDs (GPU-…)
  share: all
  # the most GPUs one job may get from this host
  max_per_job: 8

cpu:
  # cores kept for you; jobs share the rest
  reserve_cores: 2

memory:
  # memory kept for you
  reserve: 8GiB

images:
  # image prefixes jobs may run; "*" allows any image
  allow:
    - nvcr.io/nvidia/
    - docker.io/pytorch/

pricing:
  asset: USDC
  # floors per GPU-hour; the first entry whose model words appear in the GPU's name wins
  floors:
    - { model: H100, per_gpu_hour: '2.00' }
    - { model: A100, per_gpu_hour: '1.00' }
  # floor for other models (omit: no floor)
  default_per_gpu_hour: '0.30'

# subnets this host joins
subnets: [public]

# when jobs may run (omit: always)
# availability:
#   time_zone: Europe/Berlin
#   windows:
#     - { days: [mon, tue, wed, thu, fri], from: "19:00", to: "07:00" }
#     - { days: [sat, sun], from: "00:00", to: "24:00" }

jobs:
  # the longest job accepted (omit: no limit)
  max_duration: 24h

disk:
  # the disk each rank may write in its workspace (docker runtime: a file system of this size,
  # allocated as the rank writes; the process runtime cannot enforce it). "unlimited": no quota
  workspace_per_rank: 50GiB

location:
  continent: EU
  country: DE

sandbox:
  # how rank containers run: runc (Docker's default) or runsc (gVisor; CPU jobs only)
  runtime: runc
`;
