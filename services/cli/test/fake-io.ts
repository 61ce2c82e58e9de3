import { readdirSync, readFileSync, statSync } from 'node:fs';
import type { CliIo } from '../src/app/io';

export interface FakeIoOptions {
  readonly env?: Record<string, string | undefined>;
  /** Answers HTTP requests; the default refuses every connection like a closed port. */
  readonly fetch?: typeof globalThis.fetch;
}

const refused: typeof globalThis.fetch = () =>
  Promise.reject(
    new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    }),
  );

/**
 * A CliIo that captures output, reads files from `files` first (then from disk), writes files into
 * `files` (recording the private ones) and answers HTTP with `options.fetch`.
 */
export const fakeIo = (files: Record<string, string> = {}, options: FakeIoOptions = {}) => {
  const out: string[] = [];
  const err: string[] = [];
  const privateFiles = new Set<string>();
  const sleeps: number[] = [];
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
    env: { HOME: '/home/test', ...options.env },
    writePrivateFile: (path, text) => {
      files[path] = text;
      privateFiles.add(path);
      return Promise.resolve();
    },
    removeFile: (path) => {
      const had = path in files;
      delete files[path];
      return Promise.resolve(had);
    },
    fetch: options.fetch ?? refused,
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
  };
  return { io, files, privateFiles, sleeps, stdout: () => out.join(''), stderr: () => err.join('') };
};
