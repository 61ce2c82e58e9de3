import { lstat, mkdir, realpath, stat } from 'node:fs/promises';
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
