/**
 * Reply buffers lent to one candidate page each and taken back once NATS has sent the reply. A page is
 * ~500 KB: a fresh buffer per reply is external memory that only a collection frees, and discovery's
 * queries allocate so little on the JS heap that no scavenge comes between them — V8 ran a full
 * mark-compact of the whole index every ~30 replies for the external memory alone (bench/discovery).
 */
export class ReplyBufferPool {
  private readonly free: Uint8Array[] = [];

  constructor(
    private readonly options: {
      /** Each pooled buffer's size: a reply needing more gets a buffer of its own, not pooled. */
      readonly bytes: number;
      /** How many idle buffers the pool keeps (default 4: one per reply in flight at once, beyond which fresh ones are dropped). */
      readonly keep?: number;
      /**
       * Resolves once every reply handed to the connection so far has left it (`NatsConnection.flush()`:
       * its PING goes out after them, so the PONG means they were copied out). A buffer whose
       * `sent()` rejects is not reused.
       */
      readonly sent: () => Promise<void>;
      /** Waits until the reply was handed to the connection (default `setImmediate`: after the microtasks that reply). */
      readonly afterReply?: (then: () => void) => void;
    },
  ) {}

  /** Buffers idle in the pool now. */
  get idle(): number {
    return this.free.length;
  }

  /**
   * A buffer of at least `length` bytes for a reply that this turn of the event loop hands to the
   * connection; it returns to the pool once that reply has been sent.
   */
  lend(length: number): Uint8Array {
    const { bytes, keep = 4, sent, afterReply = setImmediate } = this.options;
    if (length > bytes) return new Uint8Array(length);
    const buffer = this.free.pop() ?? new Uint8Array(bytes);
    afterReply(() => {
      void sent().then(
        () => {
          if (this.free.length < keep) this.free.push(buffer);
        },
        () => undefined,
      );
    });
    return buffer;
  }
}
