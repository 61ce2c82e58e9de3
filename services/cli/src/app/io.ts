/** What a command may do to the outside world; tests pass a fake, `main.ts` the real one. */
export interface CliIo {
  /** Writes to standard output (results, diagnostics). */
  readonly out: (text: string) => void;
  /** Writes to standard error (usage errors only). */
  readonly err: (text: string) => void;
  readonly readFile: (path: string) => Promise<string>;
  /** `'file'`, `'directory'`, or `undefined` when the path does not exist. */
  readonly kind: (path: string) => Promise<'file' | 'directory' | undefined>;
  /** Entries of a directory (names, not paths). */
  readonly list: (path: string) => Promise<string[]>;
}
