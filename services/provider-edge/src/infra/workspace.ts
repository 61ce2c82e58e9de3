import { execFile } from 'node:child_process';
import { lstat, mkdir, readFile, realpath, rm, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';

export type WorkingDirResult =
  { readonly ok: true; readonly path: string } | { readonly ok: false; readonly message: string };

const inside = (root: string, path: string): boolean => path === root || path.startsWith(root + sep);

/**
 * Resolves a rank's working directory (relative, from the start command) inside its workspace and
 * creates what is missing, one component at a time (0700): a component that is a symlink is
 * followed only when its target stays inside the workspace, so an earlier attempt's `out -> /etc`
 * cannot make the edge start a rank — or create directories — outside it. Never `mkdir -p` through
 * a symlink. The workspace itself must exist.
 */
export const resolveWorkingDir = async (
  workspace: string,
  relative: string | null,
): Promise<WorkingDirResult> => {
  const root = await realpath(workspace);
  if (relative === null) return { ok: true, path: root };
  if (relative.startsWith('/') || relative.includes('\0'))
    return { ok: false, message: 'must be a relative path without NUL' };
  const parts = relative.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) return { ok: false, message: 'must not leave the rank workspace (no "..")' };
  let current = root;
  for (const part of parts) {
    const next = join(current, part);
    let info;
    try {
      info = await lstat(next);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return { ok: false, message: String(e) };
      try {
        await mkdir(next, { mode: 0o700 });
      } catch (error) {
        return { ok: false, message: `cannot create ${part}: ${(error as Error).message}` };
      }
      current = next;
      continue;
    }
    if (info.isSymbolicLink()) {
      let target: string;
      try {
        target = await realpath(next);
      } catch {
        return { ok: false, message: `${part} is a dangling symbolic link` };
      }
      if (!inside(root, target))
        return { ok: false, message: `${part} is a symbolic link leaving the rank workspace` };
      if (!(await stat(target)).isDirectory()) return { ok: false, message: `${part} is not a directory` };
      current = target;
    } else if (info.isDirectory()) current = next;
    else return { ok: false, message: `${part} is not a directory` };
  }
  // Checked again as a whole: what the rank gets as its cwd is inside the workspace.
  const final = await realpath(current);
  if (!inside(root, final)) return { ok: false, message: 'resolves outside the rank workspace' };
  return { ok: true, path: final };
};

/** Undoes the octal escapes of /proc/self/mountinfo (`\040` is a space). */
const unescapeMountPath = (path: string): string =>
  path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));

/**
 * The mount points at or below `dir` in a /proc/self/mountinfo text, deepest first (the order to
 * unmount them in). `dir` must be spelled as the kernel spells it (resolved through symlinks).
 */
export const mountPointsUnder = (mountinfo: string, dir: string): string[] => {
  const root = dir.replace(/\/+$/, '');
  const points = new Set<string>();
  for (const line of mountinfo.split('\n')) {
    const field = line.split(' ')[4];
    if (field === undefined) continue;
    const point = unescapeMountPath(field);
    if (inside(root, point)) points.add(point);
  }
  return [...points].sort((a, b) => b.split('/').length - a.split('/').length || b.localeCompare(a));
};

export interface RemoveWorkspacesOptions {
  /** Runs `umount`; default execFile. Tests record the calls. */
  readonly umount?: (args: readonly string[]) => Promise<void>;
  readonly mountinfo?: () => Promise<string>;
}

const execUmount = (args: readonly string[]): Promise<void> =>
  new Promise((resolve, reject) =>
    execFile('umount', [...args], { timeout: 60_000 }, (error, _stdout, stderr) =>
      error ? reject(new Error(`umount ${args.join(' ')}: ${stderr.trim() || error.message}`)) : resolve(),
    ),
  );

/**
 * Removes a directory of rank workspaces (`workspaces/<jobId>`, or an edge's whole directory) and
 * everything in it, unmounting first what is mounted below it (the docker runtime's per-rank file
 * systems): `rm -rf` on a mounted workspace would empty the rank's file system, fail on the mount
 * point and leave its loop device attached. A mount still busy is detached lazily (`umount -l`), so
 * the removal never walks into it; the kernel frees it with its last user.
 */
export const removeWorkspaces = async (dir: string, options: RemoveWorkspacesOptions = {}): Promise<void> => {
  const resolved = await realpath(dir).catch(() => null);
  if (resolved === null) return;
  const mountinfo = await (options.mountinfo ?? (() => readFile('/proc/self/mountinfo', 'utf8')))();
  const umount = options.umount ?? execUmount;
  for (const point of mountPointsUnder(mountinfo, resolved))
    await umount([point]).catch(() => umount(['-l', point]));
  await rm(resolved, { recursive: true, force: true });
};
