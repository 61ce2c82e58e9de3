import { readdir, readFile, stat } from 'node:fs/promises';
import type { CliIo } from '../app/io';

/** The real terminal and file system. */
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
});
