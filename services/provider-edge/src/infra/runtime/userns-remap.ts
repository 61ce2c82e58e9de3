/*
 * Docker's `userns-remap`: the daemon runs every container in a user namespace whose root is an
 * unprivileged host uid (the first of a subordinate range, `dockremap:100000:65536` in /etc/subuid
 * for `--userns-remap=default`). A host path bind-mounted into a rank — its workspace — must then
 * belong to the host uid that the rank's user maps to, not to 65532 itself.
 */
import { readFile } from 'node:fs/promises';

/** What of `docker info` tells whether, and how, the daemon remaps users. */
export interface RemapInfo {
  readonly SecurityOptions?: readonly string[] | null;
  /** `/var/lib/docker/100000.100000` under remapping: Docker keeps one root per remapped root. */
  readonly DockerRootDir?: string | null;
}

/** Host uid and gid of the container's root (container id n is host `uid + n`, n < `count`). */
export interface UidRemap {
  readonly uid: number;
  readonly gid: number;
  /** Size of the subordinate range; null when not known (found from the daemon's root dir). */
  readonly count: number | null;
}

/** True when the daemon runs containers in user namespaces of its own (`--userns-remap`). */
export const remapsUsers = (info: RemapInfo): boolean =>
  (info.SecurityOptions ?? []).some((o) => o.split(',').includes('name=userns'));

/** `user:start:count` lines of /etc/subuid or /etc/subgid, for `user`. */
const subordinateRange = (text: string | null, user: string): { start: number; count: number } | null => {
  for (const line of (text ?? '').split('\n')) {
    const [name, start, count] = line.trim().split(':');
    if (name === user && /^[0-9]+$/.test(start ?? '') && /^[0-9]+$/.test(count ?? ''))
      return { start: Number(start), count: Number(count) };
  }
  return null;
};

/**
 * The remap of a daemon, or null when it remaps nothing. Docker names its root directory after the
 * remapped root (`<data-root>/<uid>.<gid>`), which holds for any remap user; where that is not to be
 * seen, the subordinate ranges of `user` (default `dockremap`, what `--userns-remap=default` creates)
 * are read. Throws when the daemon remaps but neither says to what.
 */
export const uidRemapOf = (
  info: RemapInfo,
  files: { readonly subuid: string | null; readonly subgid: string | null },
  user = 'dockremap',
): UidRemap | null => {
  if (!remapsUsers(info)) return null;
  const uidRange = subordinateRange(files.subuid, user);
  const gidRange = subordinateRange(files.subgid, user);
  const fromRoot = /\/([0-9]+)\.([0-9]+)\/?$/.exec(info.DockerRootDir ?? '');
  if (fromRoot) {
    const uid = Number(fromRoot[1]);
    const gid = Number(fromRoot[2]);
    return { uid, gid, count: uidRange?.start === uid ? uidRange.count : null };
  }
  if (uidRange && gidRange) return { uid: uidRange.start, gid: gidRange.start, count: uidRange.count };
  throw new Error(
    `the Docker daemon remaps users (userns-remap) but its root dir ${info.DockerRootDir ?? '?'} does not ` +
      `name the remapped root and /etc/subuid or /etc/subgid has no range for ${user}`,
  );
};

/** `uidRemapOf` with this host's /etc/subuid and /etc/subgid. */
export const readUidRemap = async (info: RemapInfo): Promise<UidRemap | null> => {
  if (!remapsUsers(info)) return null;
  const read = (path: string) => readFile(path, 'utf8').catch(() => null);
  return uidRemapOf(info, { subuid: await read('/etc/subuid'), subgid: await read('/etc/subgid') });
};

/** The host uid/gid of container ids `uid`/`gid` under `remap` (identity without one). */
export const hostIds = (remap: UidRemap | null, uid: number, gid: number): { uid: number; gid: number } => {
  if (remap === null) return { uid, gid };
  if (remap.count !== null && uid >= remap.count)
    throw new Error(
      `container uid ${uid} lies outside the daemon's subordinate uid range (${remap.uid}, ${remap.count} ids)`,
    );
  return { uid: remap.uid + uid, gid: remap.gid + gid };
};
