import { z } from 'zod';
import { text } from '../primitives';

/**
 * How strongly an edge keeps a job's code from its host (ADR 0072), weakest first:
 * - `host-process`: ranks are plain processes of the provider's host (development and CI only; the
 *   provider opts in with `--unsafe-allow-host-processes`);
 * - `container`: a Docker container with every capability dropped, no-new-privileges, a read-only
 *   root, pids and memory limits and no network but the job's overlay; container root is host root;
 * - `container-userns`: the same, with container root mapped to an unprivileged host uid (Docker's
 *   `userns-remap` or rootless Docker);
 * - `gvisor`: the same container run by gVisor (`runsc`), whose user-space kernel answers the job's
 *   system calls instead of the host's.
 */
export const ISOLATION_LEVELS = ['host-process', 'container', 'container-userns', 'gvisor'] as const;
export const IsolationLevelSchema = z.enum(ISOLATION_LEVELS);
export type IsolationLevel = z.infer<typeof IsolationLevelSchema>;

/** Whether `level` is at least as strong as `minimum`. */
export const isolationAtLeast = (level: IsolationLevel, minimum: IsolationLevel): boolean =>
  ISOLATION_LEVELS.indexOf(level) >= ISOLATION_LEVELS.indexOf(minimum);

/** The isolation an edge runs every rank with, checked by the edge itself at start (ADR 0072). */
export const EdgeIsolationSchema = z.strictObject({
  level: IsolationLevelSchema,
  /** How ranks run: host processes, Docker containers, or not at all (`--runtime none`). */
  runtime: z.enum(['process', 'docker', 'none']),
  /** Docker's OCI runtime for ranks (`runc`, `runsc`); null without Docker. */
  ociRuntime: text(64).nullable(),
  /** Container root is an unprivileged uid on the host. */
  userNamespaces: z.boolean(),
  /** One line for people: what the level rests on, or what is missing for a stronger one. */
  detail: text(512),
});
export type EdgeIsolation = z.infer<typeof EdgeIsolationSchema>;

/** What a host that reports no isolation (an edge older than ADR 0072) is taken to run with. */
export const UNREPORTED_ISOLATION: EdgeIsolation = {
  level: 'host-process',
  runtime: 'process',
  ociRuntime: null,
  userNamespaces: false,
  detail: 'the edge reported no isolation (an older edge): taken as host processes',
};
