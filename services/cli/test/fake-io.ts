import { readdirSync, readFileSync, statSync } from 'node:fs';
import type { CliIo } from '../src/app/io';

/** A CliIo that captures output and reads files from `files` first, then from disk. */
export const fakeIo = (files: Record<string, string> = {}) => {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    out: (t) => void out.push(t),
    err: (t) => void err.push(t),
    readFile: (path) => {
      if (path in files) return Promise.resolve(files[path]!);
      try {
        return Promise.resolve(readFileSync(path, 'utf8'));
      } catch (e) {
        return Promise.reject(e instanceof Error ? e : new Error(String(e)));
      }
    },
    kind: (path) => {
      if (path in files) return Promise.resolve('file');
      try {
        const s = statSync(path);
        return Promise.resolve(s.isDirectory() ? 'directory' : 'file');
      } catch {
        return Promise.resolve(undefined);
      }
    },
    list: (path) => Promise.resolve(readdirSync(path)),
  };
  return { io, stdout: () => out.join(''), stderr: () => err.join('') };
};
