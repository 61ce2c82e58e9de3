import { z } from 'zod';
import { text } from '../primitives';
import { ByteCountSchema, EdgeAssetSchema, MinorAmountSchema } from './providers.schemas';

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
  memoryBytes: ByteCountSchema,
  /** Allowed image prefixes (`nvcr.io/nvidia/`); `*` allows every image. */
  images: z.array(text(256)).min(1).max(64),
  pricing: z.strictObject({
    asset: EdgeAssetSchema,
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
