import { GpuRequirementSchema, LocationSchema } from '@gpunet/ensemble-spec';
import { z } from 'zod';
import { defineCommand, defineEvent } from '../message';
import { defineQuery } from '../query';
import { EdgeIdSchema, signedEdgeReportFields, text, UtcTimestampSchema } from './primitives';
import { CORE_REQUEST_REPLY, DiscoveryStream, EdgeLivenessStream, EdgeStream } from './streams';

/*
 * Providers and their edges (F3). One provider host runs one `provider-edge`; its identity is an
 * ed25519 NATS user nkey and its edge id *is* that public key, so a message's subject, the NATS
 * credentials allowed to publish on it and the key that signed it name the same thing.
 *
 * Edge-originated messages travel on `edge.{edgeId}.…` (NATS permissions restrict every edge to its
 * own), commands to an edge on `cmd.edge.{edgeId}.…`. Discovery consumes the edge messages, keeps its
 * own event-sourced provider aggregate and publishes `provider.*` on `discovery.provider.…`.
 */

// ---------------------------------------------------------------------------------------------------
// Value schemas
// ---------------------------------------------------------------------------------------------------

const bytes = z.int().min(0);
/** Minor units of an asset as a decimal string (bigint-safe), e.g. `"2500000"` for 2.50 USDC. */
const MinorAmountSchema = z.string().regex(/^(0|[1-9][0-9]{0,38})$/, 'must be minor units: digits');
/** An asset code: `USDC`, `GPUNET`. */
const AssetSchema = z.string().regex(/^[A-Z][A-Z0-9]{1,15}$/, 'must be an asset code like USDC');

export const ComputeCapabilityValueSchema = z.strictObject({
  major: z.int().min(1).max(99),
  minor: z.int().min(0).max(9),
});

/** One MIG instance of an NVIDIA GPU in MIG mode. */
export const MigDeviceSchema = z.strictObject({
  uuid: text(128),
  /** `3g.40gb`. */
  profile: text(32),
});

/** One GPU as an edge detected (or, simulated, declared) it. */
export const GpuSchema = z.strictObject({
  /** Device index of its vendor's tool (`nvidia-smi` / `rocm-smi`); unique per vendor on a host. */
  index: z.int().min(0).max(1023),
  /** `GPU-…` (NVIDIA), the AMD unique id (`AMD-0x…`), or a stable id derived from the PCI address. */
  uuid: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9:._-]{0,127}$/, 'must be 1-128 of A-Z a-z 0-9 : . _ -'),
  vendor: z.enum(['nvidia', 'amd']),
  /** The name the driver reports: `NVIDIA H100 80GB HBM3`, `AMD Instinct MI250X`. */
  model: text(128),
  /** Total device memory (never the CPU-visible BAR window). */
  vramBytes: bytes,
  driverVersion: text(64).nullable(),
  /** CUDA version the driver supports (`12.4`); NVIDIA only. */
  cudaVersion: text(32).nullable(),
  computeCapability: ComputeCapabilityValueSchema.nullable(),
  /** ROCm version (`6.1.2`); AMD only. */
  rocmVersion: text(32).nullable(),
  /** LLVM gfx target (`gfx90a`); AMD only. */
  architecture: text(32).nullable(),
  /** `00000000:18:00.0`. */
  pciBusId: text(32).nullable(),
  mig: z.strictObject({ enabled: z.boolean(), devices: z.array(MigDeviceSchema).max(7) }),
});
export type Gpu = z.infer<typeof GpuSchema>;

/** How two GPUs of one host are connected (`nvidia-smi topo -m`, `rocm-smi --showtopotype`). */
export const GpuLinkSchema = z.strictObject({
  /** Both GPUs are this vendor's (indices are per vendor). */
  vendor: z.enum(['nvidia', 'amd']),
  /** GPU indices, `a < b`. */
  a: z.int().min(0).max(1023),
  b: z.int().min(0).max(1023),
  /** `nvlink` / `xgmi`: a direct GPU link; `pix` … `sys`: PCIe paths from near to far. */
  kind: z.enum(['nvlink', 'xgmi', 'pix', 'pxb', 'phb', 'node', 'sys', 'unknown']),
  /** Bonded NVLinks (`NV18` → 18); null for other kinds. */
  lanes: z.int().min(1).max(64).nullable(),
});
export type GpuLink = z.infer<typeof GpuLinkSchema>;

export const DetectionBackendSchema = z.strictObject({
  name: z.enum(['nvidia', 'amd', 'simulated']),
  /** `absent`: the tool is not installed; `failed`: it ran and failed (see detail). */
  status: z.enum(['ok', 'absent', 'failed']),
  detail: z.string().max(1024).nullable(),
});

/** The GPUs of a host. Stable: volatile readings (utilization, temperatures) are not part of it. */
export const InventorySchema = z.strictObject({
  /** True when the GPUs were declared in an inventory file, not detected: never real hardware. */
  simulated: z.boolean(),
  backends: z.array(DetectionBackendSchema).max(4),
  gpus: z.array(GpuSchema).max(64),
  links: z.array(GpuLinkSchema).max(2016),
});
export type Inventory = z.infer<typeof InventorySchema>;

export const HostSchema = z.strictObject({
  hostname: text(253),
  os: z.strictObject({
    platform: text(32),
    release: text(128),
    distribution: text(128).nullable(),
  }),
  cpu: z.strictObject({
    model: text(256),
    logicalCores: z.int().min(1).max(4096),
    /** `amd64`, `arm64` (as container images name them), or what the OS says. */
    architecture: text(32),
  }),
  memoryBytes: bytes,
  /** Free space where jobs' scratch data goes. */
  diskFreeBytes: bytes,
  containerRuntimes: z
    .array(z.strictObject({ name: z.enum(['docker', 'podman', 'containerd']), version: text(64).nullable() }))
    .max(4),
  addresses: z
    .array(z.strictObject({ interface: text(64), address: text(64), family: z.enum(['ipv4', 'ipv6']) }))
    .max(64),
});
export type Host = z.infer<typeof HostSchema>;

/**
 * The part of a host that makes its inventory: everything but free disk space, which moves all the
 * time. A change of free space alone is not an inventory change (it is reported with the next one).
 */
export const hostIdentity = (host: Host): Omit<Host, 'diskFreeBytes'> => {
  const { diskFreeBytes: _free, ...rest } = host;
  return rest;
};

const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;

/** A weekly window in which the provider accepts jobs; `to` ≤ `from` crosses midnight. */
export const AvailabilityWindowSchema = z.strictObject({
  days: z.array(z.enum(DAYS)).min(1).max(7),
  /** `HH:MM`, 24 h, in the policy's time zone. */
  from: z.string().regex(/^([01][0-9]|2[0-3]):[0-5][0-9]$/, 'must be HH:MM'),
  to: z.string().regex(/^([01][0-9]|2[0-3]):[0-5][0-9]$|^24:00$/, 'must be HH:MM'),
});
export type AvailabilityWindow = z.infer<typeof AvailabilityWindowSchema>;

/** What the control plane must know of a provider's policy to propose its GPUs (the edge enforces all of it). */
export const PolicySummarySchema = z.strictObject({
  /** The GPUs the provider shares; the others are never offered. */
  sharedGpuUuids: z.array(z.string().min(1).max(128)).max(64),
  maxGpusPerJob: z.int().min(1).max(64),
  /** null: no limit. */
  maxJobDurationMs: z.int().min(1).nullable(),
  /** CPU and memory the provider lets jobs use, in total. */
  cpuMillicores: z.int().min(0),
  memoryBytes: bytes,
  /** Allowed image prefixes (`nvcr.io/nvidia/`); `*` allows every image. */
  images: z.array(text(256)).min(1).max(64),
  pricing: z.strictObject({
    asset: AssetSchema,
    /** Floor per GPU-hour for models no entry names; null: such GPUs have no floor. */
    defaultFloorMinor: MinorAmountSchema.nullable(),
    /** By model (word sequence of the reported name, upper case: `H100`, `A100 80GB`), most specific first. */
    floors: z.array(z.strictObject({ model: text(64), perGpuHourMinor: MinorAmountSchema })).max(64),
  }),
  /** Subnets the provider joined. */
  subnets: z
    .array(z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/))
    .min(1)
    .max(32),
  /** null: always available. */
  availability: z
    .strictObject({ timeZone: text(64), windows: z.array(AvailabilityWindowSchema).min(1).max(32) })
    .nullable(),
  location: z.strictObject({
    continent: z.enum(['AF', 'AN', 'AS', 'EU', 'NA', 'OC', 'SA']).nullable(),
    country: z
      .string()
      .regex(/^[A-Z]{2}$/)
      .nullable(),
    city: text(128).nullable(),
  }),
});
export type PolicySummary = z.infer<typeof PolicySummarySchema>;

/** A GPU reservation an edge accepted (F5 drives them; the edge keeps them until released or expired). */
export const EdgeReservationSchema = z.strictObject({
  reservationId: text(128),
  jobId: text(128),
  gpuUuids: z.array(z.string().min(1).max(128)).min(1).max(64),
  cpuMillicores: z.int().min(0),
  memoryBytes: bytes,
  expiresAt: z.iso.datetime({ offset: false }),
});
export type EdgeReservation = z.infer<typeof EdgeReservationSchema>;

/** The upper-case words of a GPU name: `NVIDIA A100-SXM4-80GB` → `NVIDIA A100 SXM4 80GB`. */
export const modelWords = (name: string): string =>
  name
    .toUpperCase()
    .split(/[^A-Z0-9]+/)
    .filter((w) => w !== '')
    .join(' ');

/**
 * Whether `model` (a spec's or a price floor's model) names the GPU `reportedName`: its words appear
 * as a sequence in the reported name's words, as the ensemble spec defines — `A100` and `A100 80GB`
 * match `NVIDIA A100-SXM4-80GB`? `A100` does, `A100 80GB` does not (SXM4 sits between).
 */
export const modelMatches = (reportedName: string, model: string): boolean => {
  const needle = modelWords(model);
  return needle !== '' && ` ${modelWords(reportedName)} `.includes(` ${needle} `);
};

/*
 * Availability windows: the edge checks them on every reservation, discovery when it proposes GPUs.
 */
const DAY_INDEX = { mon: 0, tue: 1, wed: 2, thu: 3, fri: 4, sat: 5, sun: 6 } as const;
const WEEK_MINUTES = 7 * 1440;
const MINUTE_MS = 60_000;

const minutesOf = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** Which minutes of the week (Monday 00:00 = 0) the windows cover. */
export const weeklyCoverage = (windows: readonly AvailabilityWindow[]): Uint8Array => {
  const covered = new Uint8Array(WEEK_MINUTES);
  for (const w of windows) {
    const from = minutesOf(w.from);
    const to = w.to === '24:00' ? 1440 : minutesOf(w.to);
    for (const day of w.days) {
      const start = DAY_INDEX[day] * 1440 + from;
      const end = DAY_INDEX[day] * 1440 + (to > from ? to : to + 1440);
      for (let m = start; m < end; m++) covered[m % WEEK_MINUTES] = 1;
    }
  }
  return covered;
};

const WEEKDAY = { Mon: 0, Tue: 1, Wed: 2, Thu: 3, Fri: 4, Sat: 5, Sun: 6 } as const;

/*
 * Discovery evaluates availability for every candidate provider of every query (thousands a second):
 * an `Intl.DateTimeFormat` costs tens of µs to build and a week's coverage ten thousand writes, so
 * both are built once — a formatter per time zone, the coverage and its stretches per windows array
 * (the same array object for as long as a provider's policy is unchanged) — and the minute of the
 * week is remembered per time zone and minute.
 */
const formatters = new Map<string, Intl.DateTimeFormat>();
const formatterFor = (timeZone: string): Intl.DateTimeFormat => {
  let formatter = formatters.get(timeZone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    if (formatters.size < 1_000) formatters.set(timeZone, formatter);
  }
  return formatter;
};
const minutesOfWeek = new Map<string, number>();

/** Minute of the week of `atMs` as a wall clock in `timeZone` shows it. */
export const minuteOfWeek = (atMs: number, timeZone: string): number => {
  const key = `${Math.floor(atMs / MINUTE_MS)} ${timeZone}`;
  const known = minutesOfWeek.get(key);
  if (known !== undefined) return known;
  const parts = formatterFor(timeZone).formatToParts(new Date(atMs));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  const day = WEEKDAY[get('weekday') as keyof typeof WEEKDAY] ?? 0;
  const minute = day * 1440 + (Number(get('hour')) % 24) * 60 + Number(get('minute'));
  if (minutesOfWeek.size >= 4_096) minutesOfWeek.clear();
  minutesOfWeek.set(key, minute);
  return minute;
};

/**
 * For each minute of the week, how many minutes from it on the windows cover without a break
 * (`WEEK_MINUTES` everywhere when they cover the whole week; 0 where they do not cover it).
 */
const coveredStretches = (covered: Uint8Array): Uint16Array => {
  const stretch = new Uint16Array(WEEK_MINUTES);
  if (covered.every((c) => c === 1)) return stretch.fill(WEEK_MINUTES);
  // Twice around the week backwards, so a stretch that wraps past Sunday midnight is counted whole.
  for (let m = 2 * WEEK_MINUTES - 1; m >= 0; m--) {
    const i = m % WEEK_MINUTES;
    stretch[i] = covered[i] ? stretch[(i + 1) % WEEK_MINUTES]! + 1 : 0;
  }
  return stretch;
};
const stretches = new WeakMap<readonly AvailabilityWindow[], Uint16Array>();
const stretchesOf = (windows: readonly AvailabilityWindow[]): Uint16Array => {
  let s = stretches.get(windows);
  if (s === undefined) {
    s = coveredStretches(weeklyCoverage(windows));
    stretches.set(windows, s);
  }
  return s;
};

/**
 * Until when the provider is available without a break, starting at `atMs`: `null` when not available
 * at `atMs`, `'always'` when the windows cover the whole week, else the instant the current stretch
 * of windows ends. The time zone's offset at `atMs` is used for the whole stretch (a daylight-saving
 * change during a job shifts its end by that hour). The windows array must not be mutated once passed
 * (what it covers is remembered per array).
 */
export const availableUntil = (
  availability: { readonly timeZone: string; readonly windows: readonly AvailabilityWindow[] } | null,
  atMs: number,
): number | 'always' | null => {
  if (availability === null) return 'always';
  const minutes = stretchesOf(availability.windows)[minuteOfWeek(atMs, availability.timeZone)]!;
  if (minutes === 0) return null;
  if (minutes === WEEK_MINUTES) return 'always';
  const intoMinute = ((atMs % MINUTE_MS) + MINUTE_MS) % MINUTE_MS;
  return atMs - intoMinute + minutes * MINUTE_MS;
};

// ---------------------------------------------------------------------------------------------------
// Edge → control plane
// ---------------------------------------------------------------------------------------------------

export const EdgeRegistered = defineEvent({
  type: 'edge.registered',
  version: 1,
  subject: 'edge.{edgeId}.registered.v1',
  stream: EdgeStream.name,
  description: 'An edge (re)joined the network: who it is, what it has and what it shares. Signed.',
  schema: z.strictObject({
    ...signedEdgeReportFields,
    /** A name the provider chose, for people. */
    name: text(64),
    agentVersion: text(32),
    host: HostSchema,
    inventory: InventorySchema,
    policy: PolicySummarySchema,
  }),
});

export const EdgeInventoryReported = defineEvent({
  type: 'edge.inventory-reported',
  version: 1,
  subject: 'edge.{edgeId}.inventory-reported.v1',
  stream: EdgeStream.name,
  description: "An edge's hardware changed (a GPU appeared, vanished or changed). Signed.",
  schema: z.strictObject({ ...signedEdgeReportFields, host: HostSchema, inventory: InventorySchema }),
});

export const EdgePolicyReported = defineEvent({
  type: 'edge.policy-reported',
  version: 1,
  subject: 'edge.{edgeId}.policy-reported.v1',
  stream: EdgeStream.name,
  description: 'The provider changed what the edge shares. Signed.',
  schema: z.strictObject({ ...signedEdgeReportFields, policy: PolicySummarySchema }),
});

export const EdgeReservationsReported = defineEvent({
  type: 'edge.reservations-reported',
  version: 1,
  subject: 'edge.{edgeId}.reservations-reported.v1',
  stream: EdgeStream.name,
  description: "The edge's reservations after one was accepted, released or expired. Signed.",
  schema: z.strictObject({ ...signedEdgeReportFields, reservations: z.array(EdgeReservationSchema).max(64) }),
});

export const EdgeDeregistered = defineEvent({
  type: 'edge.deregistered',
  version: 1,
  subject: 'edge.{edgeId}.deregistered.v1',
  stream: EdgeStream.name,
  description: 'The provider took the edge out of the network. Signed.',
  schema: z.strictObject({ ...signedEdgeReportFields, reason: z.string().max(256) }),
});

/**
 * Liveness, every few seconds, on core NATS (also kept a minute in `EDGE_LIVENESS`). Not signed: the
 * server's permissions let only this edge's credentials publish on its subject. Discovery measures
 * silence with its own clock; `sentAt` is informational.
 */
export const EdgeHeartbeat = defineEvent({
  type: 'edge.heartbeat',
  version: 1,
  subject: 'edge.{edgeId}.heartbeat.v1',
  stream: EdgeLivenessStream.name,
  description: 'An edge is alive; carries the digest of the inventory it last reported.',
  schema: z.strictObject({
    edgeId: EdgeIdSchema,
    sequence: z.int().min(1),
    sentAt: z.iso.datetime({ offset: false }),
    /** sha256 (hex) of the canonical inventory last reported. */
    inventoryDigest: z.string().regex(/^[0-9a-f]{64}$/),
  }),
});

// ---------------------------------------------------------------------------------------------------
// Control plane → edge (request/reply)
// ---------------------------------------------------------------------------------------------------

/** Asks an edge to hold GPUs for a job; the edge re-checks its policy and answers `ReservationReply`. */
export const ReserveOnEdge = defineCommand({
  type: 'edge.reserve',
  version: 1,
  subject: 'cmd.edge.{edgeId}.reserve.v1',
  stream: CORE_REQUEST_REPLY,
  description: 'Hold these GPUs for a job until holdUntil; answered with accepted or declined and reasons.',
  schema: z.strictObject({
    reservationId: text(128),
    jobId: text(128),
    gpuUuids: z.array(z.string().min(1).max(128)).min(1).max(64),
    cpuMillicores: z.int().min(0),
    memoryBytes: bytes,
    /** null: no image yet (a benchmark reservation). */
    image: text(512).nullable(),
    maxDurationMs: z.int().min(1),
    subnet: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,62}$/)
      .nullable(),
    asset: AssetSchema,
    pricePerGpuHourMinor: MinorAmountSchema,
    /** The reservation lapses at this instant unless the job starts. */
    holdUntil: z.iso.datetime({ offset: false }),
  }),
});

export const ReleaseOnEdge = defineCommand({
  type: 'edge.release',
  version: 1,
  subject: 'cmd.edge.{edgeId}.release.v1',
  stream: CORE_REQUEST_REPLY,
  description: 'Release a reservation. Idempotent: releasing an unknown one succeeds.',
  schema: z.strictObject({ reservationId: text(128), reason: z.string().max(256) }),
});

/** Why an edge declined: a code to branch on, a message for people, the request field at fault. */
export const DeclineReasonSchema = z.strictObject({
  code: z.enum([
    'GPU_UNKNOWN',
    'GPU_NOT_SHARED',
    'GPU_BUSY',
    'TOO_MANY_GPUS',
    'CPU_UNAVAILABLE',
    'MEMORY_UNAVAILABLE',
    'IMAGE_NOT_ALLOWED',
    'ASSET_NOT_ACCEPTED',
    'PRICE_BELOW_FLOOR',
    'SUBNET_NOT_JOINED',
    'DURATION_TOO_LONG',
    'OUTSIDE_AVAILABILITY',
    'HOLD_EXPIRED',
    'RESERVATION_CONFLICT',
    /** The command itself is off contract (`field` names the part). */
    'INVALID_REQUEST',
  ]),
  message: z.string().max(512),
  field: z.string().max(128).nullable(),
});
export type DeclineReason = z.infer<typeof DeclineReasonSchema>;

export const ReservationReplySchema = z.discriminatedUnion('outcome', [
  z.strictObject({ reservationId: text(128), outcome: z.literal('accepted'), reasons: z.array(z.never()) }),
  z.strictObject({
    reservationId: text(128),
    outcome: z.literal('declined'),
    reasons: z.array(DeclineReasonSchema).min(1).max(64),
  }),
]);
export type ReservationReply = z.infer<typeof ReservationReplySchema>;

export const ReleaseReplySchema = z.strictObject({ reservationId: text(128), released: z.boolean() });
export type ReleaseReply = z.infer<typeof ReleaseReplySchema>;

// ---------------------------------------------------------------------------------------------------
// Discovery's provider aggregate
// ---------------------------------------------------------------------------------------------------

const providerId = { providerId: EdgeIdSchema };
/** The sequence of the edge report that caused the event: older reports are recognised and ignored. */
const sequence = z.int().min(1);

export const ProviderRegistered = defineEvent({
  type: 'provider.registered',
  version: 1,
  subject: 'discovery.provider.registered.v1',
  stream: DiscoveryStream.name,
  description: 'A provider edge joined the network with a verified identity.',
  schema: z.strictObject({
    ...providerId,
    sequence,
    publicKey: EdgeIdSchema,
    name: text(64),
    agentVersion: text(32),
    at: UtcTimestampSchema,
    host: HostSchema,
    inventory: InventorySchema,
    policy: PolicySummarySchema,
  }),
});

export const ProviderInventoryChanged = defineEvent({
  type: 'provider.inventory-changed',
  version: 1,
  subject: 'discovery.provider.inventory-changed.v1',
  stream: DiscoveryStream.name,
  description: "A provider's hardware differs from what was known.",
  schema: z.strictObject({
    ...providerId,
    sequence,
    at: UtcTimestampSchema,
    host: HostSchema,
    inventory: InventorySchema,
  }),
});

export const ProviderPolicyChanged = defineEvent({
  type: 'provider.policy-changed',
  version: 1,
  subject: 'discovery.provider.policy-changed.v1',
  stream: DiscoveryStream.name,
  description: 'A provider changed what it shares.',
  schema: z.strictObject({ ...providerId, sequence, at: UtcTimestampSchema, policy: PolicySummarySchema }),
});

export const ProviderReservationsChanged = defineEvent({
  type: 'provider.reservations-changed',
  version: 1,
  subject: 'discovery.provider.reservations-changed.v1',
  stream: DiscoveryStream.name,
  description: "The GPUs a provider's edge holds for jobs changed.",
  schema: z.strictObject({
    ...providerId,
    sequence,
    at: UtcTimestampSchema,
    reservations: z.array(EdgeReservationSchema).max(64),
  }),
});

export const ProviderOnline = defineEvent({
  type: 'provider.online',
  version: 1,
  subject: 'discovery.provider.online.v1',
  stream: DiscoveryStream.name,
  description: 'A provider is heard from again (or for the first time).',
  schema: z.strictObject({ ...providerId, at: UtcTimestampSchema }),
});

export const ProviderOffline = defineEvent({
  type: 'provider.offline',
  version: 1,
  subject: 'discovery.provider.offline.v1',
  stream: DiscoveryStream.name,
  description: 'A provider was silent for longer than the liveness window; its GPUs are not offered.',
  schema: z.strictObject({
    ...providerId,
    at: UtcTimestampSchema,
    lastSeenAt: UtcTimestampSchema.nullable(),
    reason: z.enum(['heartbeat-timeout']),
  }),
});

export const ProviderDeregistered = defineEvent({
  type: 'provider.deregistered',
  version: 1,
  subject: 'discovery.provider.deregistered.v1',
  stream: DiscoveryStream.name,
  description: 'A provider left the network.',
  schema: z.strictObject({ ...providerId, sequence, at: UtcTimestampSchema, reason: z.string().max(256) }),
});

// ---------------------------------------------------------------------------------------------------
// The candidate query (the scheduler's input)
// ---------------------------------------------------------------------------------------------------

export const CandidateGpuSchema = z.strictObject({
  uuid: z.string(),
  index: z.int(),
  vendor: z.enum(['nvidia', 'amd']),
  model: z.string(),
  vramBytes: bytes,
  computeCapability: ComputeCapabilityValueSchema.nullable(),
  cudaVersion: z.string().nullable(),
  rocmVersion: z.string().nullable(),
  architecture: z.string().nullable(),
  pciBusId: z.string().nullable(),
  /** The provider's floor for this GPU per hour in `asset`; null: none. */
  priceFloorMinor: MinorAmountSchema.nullable(),
  /** Indices of GPUs on the same host reachable over NVLink/xGMI. */
  directPeers: z.array(z.int()),
});
export type CandidateGpu = z.infer<typeof CandidateGpuSchema>;

export const CandidateProviderSchema = z.strictObject({
  providerId: EdgeIdSchema,
  name: z.string(),
  /** Declared, not detected, hardware: a simulated edge. */
  simulated: z.boolean(),
  cpuArchitecture: z.string(),
  cpuMillicores: z.int().min(0),
  memoryBytes: bytes,
  location: PolicySummarySchema.shape.location,
  subnets: z.array(z.string()),
  maxGpusPerJob: z.int(),
  maxJobDurationMs: z.int().nullable(),
  asset: AssetSchema,
  /** The provider's free, shared GPUs that meet the requirement, by index. */
  gpus: z.array(CandidateGpuSchema).min(1),
});
export type CandidateProvider = z.infer<typeof CandidateProviderSchema>;

export const FindCandidates = defineQuery({
  name: 'discovery.candidates',
  version: 1,
  description:
    'Online providers with free, shared GPUs that meet a normalized GPU requirement (ensemble spec), paged by provider.',
  request: z.strictObject({
    /** `resources.gpus` of a normalized allocation. */
    gpu: GpuRequirementSchema,
    /** Only providers that can give at least this many matching GPUs to one job. Default 1. */
    minGpusPerProvider: z.int().min(1).max(64).default(1),
    /** Only providers sharing at least this much CPU/memory. Default 0. */
    minCpuMillicores: z.int().min(0).default(0),
    minMemoryBytes: bytes.default(0),
    cpuArchitecture: z.enum(['amd64', 'arm64']).nullable().default(null),
    /** Only providers that joined this subnet. */
    subnet: z.string().max(63).nullable().default(null),
    /** Only providers whose image prefixes allow it. */
    image: z.string().max(512).nullable().default(null),
    /** Only providers that accept jobs this long. */
    maxDurationMs: z.int().min(1).nullable().default(null),
    /** Only GPUs whose floor is at most this per GPU-hour (providers pricing in another asset drop out). */
    maxPrice: z
      .strictObject({ asset: AssetSchema, perGpuHourMinor: MinorAmountSchema })
      .nullable()
      .default(null),
    location: LocationSchema.nullable().default(null),
    includeSimulated: z.boolean().default(true),
    excludeProviders: z.array(EdgeIdSchema).max(1000).default([]),
    /** Instant for availability windows; default: the server's now. */
    at: UtcTimestampSchema.nullable().default(null),
    /** `nextCursor` of the previous page. */
    cursor: z.string().max(128).nullable().default(null),
    limit: z.int().min(1).max(1000).default(200),
  }),
  response: z.strictObject({
    items: z.array(CandidateProviderSchema),
    /** null: this was the last page. */
    nextCursor: z.string().nullable(),
  }),
});

// ---------------------------------------------------------------------------------------------------
// Lists
// ---------------------------------------------------------------------------------------------------

/** Every provider message, for registries. */
export const providerCatalog = [
  EdgeRegistered,
  EdgeInventoryReported,
  EdgePolicyReported,
  EdgeReservationsReported,
  EdgeDeregistered,
  EdgeHeartbeat,
  ReserveOnEdge,
  ReleaseOnEdge,
  ProviderRegistered,
  ProviderInventoryChanged,
  ProviderPolicyChanged,
  ProviderReservationsChanged,
  ProviderOnline,
  ProviderOffline,
  ProviderDeregistered,
] as const;
