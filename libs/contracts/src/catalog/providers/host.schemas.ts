import { z } from 'zod';
import { text } from '../primitives';
import { EdgeIsolationSchema } from './isolation.schemas';
import { ByteCountSchema } from './providers.schemas';

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
  memoryBytes: ByteCountSchema,
  /** Free space where jobs' scratch data goes. */
  diskFreeBytes: ByteCountSchema,
  containerRuntimes: z
    .array(z.strictObject({ name: z.enum(['docker', 'podman', 'containerd']), version: text(64).nullable() }))
    .max(4),
  addresses: z
    .array(z.strictObject({ interface: text(64), address: text(64), family: z.enum(['ipv4', 'ipv6']) }))
    .max(64),
  /**
   * The isolation the edge runs ranks with (ADR 0072). Optional so that the signatures of reports
   * from older edges still verify; absent means `UNREPORTED_ISOLATION` (host processes).
   */
  isolation: EdgeIsolationSchema.optional(),
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
