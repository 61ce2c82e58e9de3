import { z } from 'zod';

/** Most environment variables one rank may get, and their total size (names + values), bytes. */
export const MAX_RANK_ENV_ENTRIES = 512;
export const MAX_RANK_ENV_BYTES = 256 * 1024;

/** A POSIX environment variable name. */
export const EnvNameSchema = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)');

/**
 * A working directory relative to the rank's workspace: no `..` segment, not absolute, no NUL.
 * The edge resolves it inside the workspace and checks again (symlinks).
 */
export const RelativePathSchema = z
  .string()
  .min(1)
  .max(1024)
  .refine((p) => !p.startsWith('/'), 'must be relative to the rank workspace, not absolute')
  .refine((p) => !p.split('/').includes('..'), 'must not leave the rank workspace (no ".." segment)')
  .refine((p) => !p.includes('\0'), 'must not contain NUL');

export const RankRuntimeSchema = z.enum(['process', 'docker']);
export type RankRuntimeKind = z.infer<typeof RankRuntimeSchema>;

/** Limits the edge applies to a rank where its runtime and OS allow. */
export const RankLimitsSchema = z.strictObject({
  cpuMillicores: z.int().min(0).max(4_096_000),
  memoryBytes: z.int().min(0).max(Number.MAX_SAFE_INTEGER),
  /** Processes/threads the rank may have at once; null: the runtime's default. */
  pids: z.int().min(16).max(1_000_000).nullable(),
});
export type RankLimits = z.infer<typeof RankLimitsSchema>;
