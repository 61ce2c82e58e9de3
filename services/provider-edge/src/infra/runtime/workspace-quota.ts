/*
 * A rank's disk quota as a file system of its own: a sparse file of the quota's size, formatted
 * ext4 and loop-mounted on the rank's workspace. A rank that writes past it gets ENOSPC from its
 * own file system, and the host's disk only ever holds what the rank actually wrote (never more than
 * the quota). The image lies next to the workspace (`rank-0` → `rank-0.ext4`), in the job's
 * directory, which the rank cannot see; `removeWorkspaces` unmounts before removing both.
 */
import { execFile } from 'node:child_process';
import { chmod, open, readFile, readlink, realpath, rm } from 'node:fs/promises';
import { RankStartError } from '../../app/rank-runtime.port';
import { mountPointsUnder } from '../workspace';

export interface QuotaWorkspaceOptions {
  /** Where the Docker daemon's pid is written: its mount namespace must be the edge's. */
  readonly dockerPidFile?: string;
}

/** The image file of the workspace at `workspace`. */
export const workspaceImage = (workspace: string): string => `${workspace.replace(/\/+$/, '')}.ext4`;

const run = (file: string, args: readonly string[]): Promise<void> =>
  new Promise((resolve, reject) =>
    execFile(file, [...args], { timeout: 120_000 }, (error, _stdout, stderr) =>
      error ? reject(new Error(`${file} ${args.join(' ')}: ${stderr.trim() || error.message}`)) : resolve(),
    ),
  );

const isMountPoint = async (path: string): Promise<boolean> =>
  mountPointsUnder(await readFile('/proc/self/mountinfo', 'utf8'), path).includes(path);

/**
 * Why the workspace file system cannot be mounted where the Docker daemon sees it, or null. A mount
 * made in another mount namespace (an edge started under `ip netns exec`, which makes one) would
 * leave the daemon bind-mounting the bare directory: the quota would silently not apply.
 */
const mountNamespaceProblem = async (pidFile: string): Promise<string | null> => {
  let pid: string;
  try {
    pid = (await readFile(pidFile, 'utf8')).trim();
  } catch {
    return null; // No pid file to compare with (rootless or remote daemons): trust the host's layout.
  }
  const [own, daemon] = await Promise.all([
    readlink('/proc/self/ns/mnt').catch(() => null),
    readlink(`/proc/${pid}/ns/mnt`).catch(() => null),
  ]);
  if (own === null || daemon === null || own === daemon) return null;
  return (
    `the edge runs in another mount namespace (${own}) than the Docker daemon (${daemon}, pid ${pid}): ` +
    'a workspace mounted here would not be what the container sees. Start the edge in the host’s ' +
    'mount namespace (not under `ip netns exec`)'
  );
};

const failed = (reason: string): RankStartError =>
  new RankStartError(
    `workspace: cannot give the rank its own file system of disk.workspace_per_rank: ${reason}`,
    'workspace',
    'RUNTIME_UNAVAILABLE',
  );

/**
 * Mounts the rank's file system of `bytes` on `workspace` (an existing directory), creating and
 * formatting its image on first use. Idempotent: a workspace already mounted is left as it is, and
 * an existing image (an earlier attempt's, or one from before an edge restart) is mounted with
 * what it holds, whatever its size. Throws `RankStartError` (RUNTIME_UNAVAILABLE) naming the key.
 */
export const mountQuotaWorkspace = async (
  workspace: string,
  bytes: number,
  options: QuotaWorkspaceOptions = {},
): Promise<void> => {
  const dir = await realpath(workspace).catch(() => null);
  if (dir === null) throw new RankStartError(`workspace: ${workspace} does not exist`, 'workspace');
  if (await isMountPoint(dir)) return;
  if (process.getuid?.() !== 0) throw failed('mounting it needs root');
  const problem = await mountNamespaceProblem(options.dockerPidFile ?? '/var/run/docker.pid');
  if (problem !== null) throw failed(problem);
  const image = workspaceImage(dir);
  let created = false;
  try {
    // Sparse: the file takes no disk until the rank writes.
    const file = await open(image, 'wx', 0o600);
    try {
      await file.truncate(bytes);
    } finally {
      await file.close();
    }
    created = true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw failed((e as Error).message);
  }
  try {
    if (created)
      // No reserved blocks: the quota is all the rank's. The image reads as zeros, so its inode
      // tables and journal need no zeroing (lazy_*_init, and noinit_itable below): zeroing them
      // would write (and allocate) hundreds of MiB per rank for nothing.
      await run('mkfs.ext4', [
        '-F',
        '-q',
        '-m',
        '0',
        '-E',
        'lazy_itable_init=1,lazy_journal_init=1,nodiscard',
        image,
      ]);
    // `-o loop` attaches a loop device with autoclear: unmounting frees it.
    await run('mount', ['-t', 'ext4', '-o', 'loop,nosuid,nodev,noinit_itable', image, dir]);
  } catch (e) {
    if (created) await rm(image, { force: true });
    throw failed((e as Error).message);
  }
  // The new file system's root is 0755 root's; keep the agent's 0700 (the runtime chowns it).
  await chmod(dir, 0o700).catch((e: unknown) => {
    throw failed((e as Error).message);
  });
};
