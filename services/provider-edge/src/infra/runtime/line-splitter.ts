import { StringDecoder } from 'node:string_decoder';

/** Longest line a rank's output is shipped in (the `RankLogChunk` contract's per-line bound). */
export const MAX_LINE_CHARS = 16 * 1024;

/**
 * Splits a byte stream into lines without holding more than one line in memory: a line longer than
 * `maxChars` is cut into pieces of `maxChars` (a rank printing a 1 GB line never grows the edge).
 * UTF-8 sequences split across chunks are decoded whole; `\r\n` counts as one line end.
 */
export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private partial = '';

  constructor(
    private readonly emit: (line: string) => void,
    private readonly maxChars = MAX_LINE_CHARS,
  ) {}

  push(chunk: Buffer | string): void {
    this.take(typeof chunk === 'string' ? chunk : this.decoder.write(chunk));
  }

  /** Emits what is left (a last line without a newline). */
  end(): void {
    this.take(this.decoder.end());
    if (this.partial !== '') this.emit(this.partial);
    this.partial = '';
  }

  private take(text: string): void {
    let start = 0;
    for (;;) {
      const nl = text.indexOf('\n', start);
      const piece = nl === -1 ? text.slice(start) : text.slice(start, nl);
      this.append(piece);
      if (nl === -1) return;
      const line = this.partial.endsWith('\r') ? this.partial.slice(0, -1) : this.partial;
      this.partial = '';
      this.emit(line);
      start = nl + 1;
    }
  }

  private append(piece: string): void {
    let rest = piece;
    while (this.partial.length + rest.length > this.maxChars) {
      const room = this.maxChars - this.partial.length;
      this.emit(this.partial + rest.slice(0, room));
      this.partial = '';
      rest = rest.slice(room);
    }
    this.partial += rest;
  }
}
