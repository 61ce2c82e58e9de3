/** How a rank's output is batched into `RankLogChunk`s. */
export interface LogBatching {
  /** Longest a line waits before it is shipped, ms. Default 100. */
  readonly maxDelayMs?: number;
  /** Most lines in one chunk. Default 64 (the contract allows 1 024). */
  readonly maxLines?: number;
  /** Most bytes of lines in one chunk (NATS payload limit). Default 256 KiB. */
  readonly maxChunkBytes?: number;
  /** Most lines waiting per rank and stream; beyond, lines are dropped and counted. Default 4 096. */
  readonly maxBufferedLines?: number;
}

export interface LogChunkOut {
  readonly seq: number;
  readonly lines: string[];
  readonly dropped: number;
}

/**
 * Batches one stream (stdout or stderr) of one rank. `push` never blocks and never throws: when the
 * buffer is full, or the link is down (`send` returns false), lines are dropped and the next chunk
 * says how many (`dropped`, counted since the previous chunk). The rank's pipes are never paused for
 * the logs' sake.
 */
export class LogShipper {
  private buffer: string[] = [];
  private bytes = 0;
  private dropped = 0;
  private seq = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly maxDelayMs: number;
  private readonly maxLines: number;
  private readonly maxChunkBytes: number;
  private readonly maxBufferedLines: number;

  constructor(
    /** Ships a chunk; false when it could not (the chunk's lines count as dropped). */
    private readonly send: (chunk: LogChunkOut) => boolean,
    options: LogBatching = {},
  ) {
    this.maxDelayMs = options.maxDelayMs ?? 100;
    this.maxLines = Math.min(1024, Math.max(1, options.maxLines ?? 64));
    this.maxChunkBytes = options.maxChunkBytes ?? 256 * 1024;
    this.maxBufferedLines = options.maxBufferedLines ?? 4096;
  }

  /** Lines dropped so far and not yet reported in a chunk. */
  get droppedPending(): number {
    return this.dropped;
  }

  push(line: string): void {
    if (this.buffer.length >= this.maxBufferedLines) {
      this.dropped += 1;
      return;
    }
    this.buffer.push(line);
    this.bytes += line.length;
    if (this.buffer.length >= this.maxLines || this.bytes >= this.maxChunkBytes) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.maxDelayMs);
  }

  /** Ships everything waiting now (and a chunk carrying only a drop count, if lines were lost). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.buffer.length > 0 || this.dropped > 0) {
      const lines: string[] = [];
      let size = 0;
      while (
        this.buffer.length > 0 &&
        lines.length < this.maxLines &&
        (lines.length === 0 || size + this.buffer[0]!.length <= this.maxChunkBytes)
      ) {
        const line = this.buffer.shift()!;
        size += line.length;
        lines.push(line);
      }
      this.bytes -= size;
      const chunk = { seq: this.seq + 1, lines, dropped: this.dropped };
      if (this.send(chunk)) {
        this.seq += 1;
        this.dropped = 0;
      } else {
        // The link is down: these lines are lost too, and said so in the next chunk that goes out.
        this.dropped += lines.length;
        this.buffer = [];
        this.bytes = 0;
        return;
      }
    }
  }

  /** Ships what is left and stops the timer. */
  close(): void {
    this.flush();
    clearTimeout(this.timer);
  }
}
