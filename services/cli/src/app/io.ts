/** What a command may do to the outside world; tests pass a fake, `main.ts` the real one. */
export interface CliIo {
  /** Writes to standard output (results, diagnostics). */
  readonly out: (text: string) => void;
  /** Writes to standard error (usage errors, API errors in human mode). */
  readonly err: (text: string) => void;
  readonly readFile: (path: string) => Promise<string>;
  /** `'file'`, `'directory'`, or `undefined` when the path does not exist. */
  readonly kind: (path: string) => Promise<'file' | 'directory' | undefined>;
  /** Entries of a directory (names, not paths). */
  readonly list: (path: string) => Promise<string[]>;
  /** The environment (`GPUNET_GATEWAY`, `GPUNET_API_KEY`, `GPUNET_CONFIG`, `HOME`, …). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Creates the file (and its directories) readable by the owner only (0600): it holds the API key. */
  readonly writePrivateFile: (path: string, text: string) => Promise<void>;
  /** Removes a file; false when there was none. */
  readonly removeFile: (path: string) => Promise<boolean>;
  /** HTTP: Node's fetch, or a fake. */
  readonly fetch: typeof globalThis.fetch;
  /** Waits (between reconnects of an event stream). */
  readonly sleep: (ms: number) => Promise<void>;
}
