import { chmod, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname } from 'node:path';
import type { CliIo } from '../app/io';

/** The real terminal, file system, environment and network. */
export const nodeIo = (): CliIo => ({
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  readFile: (path) => readFile(path, 'utf8'),
  kind: async (path) => {
    try {
      const s = await stat(path);
      return s.isDirectory() ? 'directory' : s.isFile() ? 'file' : undefined;
    } catch {
      return undefined;
    }
  },
  list: (path) => readdir(path),
  env: { HOME: homedir(), ...process.env },
  writePrivateFile: async (path, text) => {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    await writeFile(path, text, { mode: 0o600 });
    // `mode` applies only when the file is created; an existing file is narrowed too.
    await chmod(path, 0o600);
  },
  removeFile: async (path) => {
    try {
      await stat(path);
    } catch {
      return false;
    }
    await rm(path);
    return true;
  },
  fetch: (input, init) => globalThis.fetch(input, init),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
});
