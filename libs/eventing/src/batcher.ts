export interface BatcherOptions {
  /** Inputs per call at most. Default 64. */
  readonly maxBatch?: number;
  /** Calls in flight at once. Default 2. */
  readonly maxInFlight?: number;
}

/**
 * Coalesces concurrent requests into batched calls (group commit, DataLoader-style reads): an input
 * that arrives while `maxInFlight` calls are running waits and joins the next call, so N concurrent
 * requests cost about one round trip instead of N; an input arriving when a call slot is free goes
 * at once (no added latency when idle). A call starts after every input it carries arrived, so it
 * sees at least what each caller could see when it asked. Each input gets its own output, in order;
 * a failed call rejects its own inputs only, and a call that answers with the wrong number of
 * outputs rejects them all.
 */
export class Batcher<I, O> {
  private readonly queue: { input: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly run: (inputs: readonly I[]) => Promise<readonly O[]>,
    private readonly options: BatcherOptions = {},
  ) {}

  submit(input: I): Promise<O> {
    return new Promise((resolve, reject) => {
      this.queue.push({ input, resolve, reject });
      // Right after a call completed, the next one is about to start: join it.
      if (!this.scheduled) this.pump();
    });
  }

  /**
   * The next call starts on the next macrotask, not in the completed call's callback: the callers
   * it just answered run first, and what they submit at once (a writer's next append, the next
   * step of a request) joins that call instead of waiting behind it.
   */
  private pumpSoon(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (this.queue.length > 0 && this.inFlight < (this.options.maxInFlight ?? 2)) {
      const batch = this.queue.splice(0, this.options.maxBatch ?? 64);
      this.inFlight += 1;
      void this.run(batch.map((b) => b.input)).then(
        (outputs) => {
          this.inFlight -= 1;
          if (outputs.length !== batch.length) {
            const error = new Error(`a batched call answered ${outputs.length} of ${batch.length} inputs`);
            for (const b of batch) b.reject(error);
          } else batch.forEach((b, i) => b.resolve(outputs[i]!));
          this.pumpSoon();
        },
        (error: unknown) => {
          this.inFlight -= 1;
          for (const b of batch) b.reject(error);
          this.pumpSoon();
        },
      );
    }
  }
}
