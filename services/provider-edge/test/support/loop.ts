import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/**
 * Why this machine cannot give ranks a workspace file system (the docker runtime loop-mounts an
 * ext4 image per rank), or null when it can. Suites that need it skip with this reason, loudly.
 */
export const loopMountProblem = async (): Promise<string | null> => {
  if (process.getuid?.() !== 0) return 'not root (mounting a loop device needs it)';
  try {
    await exec('losetup', ['-f']);
  } catch (e) {
    return `no free loop device (losetup -f: ${(e as Error).message.trim()})`;
  }
  try {
    await exec('mkfs.ext4', ['-V']);
  } catch {
    return 'mkfs.ext4 is not installed (e2fsprogs)';
  }
  return null;
};

/** Prints a skip that cannot be missed in the log. */
export const warnSkipped = (what: string, why: string): void =>
  console.warn(`\n${'!'.repeat(100)}\n!! SKIPPING ${what}: ${why}\n${'!'.repeat(100)}\n`);
