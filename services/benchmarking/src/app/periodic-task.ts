import type { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';

/**
 * A provider that runs its task every `intervalMs` once the application has bootstrapped (0: only
 * when asked) and whenever `runNow()` is called, one run at a time: a run asked for while one is in
 * flight is that one. A shutdown stops the timer and waits for the run in flight.
 */
export abstract class PeriodicTask<T> implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<T> | undefined;

  protected constructor(
    private readonly schedule: {
      readonly intervalMs: number;
      /** Told a failed run the timer started (a caller of `runNow()` gets its own error). */
      readonly onError: (error: unknown) => void;
    },
  ) {}

  protected abstract runOnce(): Promise<T>;

  onApplicationBootstrap(): void {
    if (this.schedule.intervalMs > 0)
      this.timer = setInterval(() => {
        this.runNow().catch((e: unknown) => this.schedule.onError(e));
      }, this.schedule.intervalMs);
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  protected runNow(): Promise<T> {
    this.running ??= this.runOnce().finally(() => (this.running = undefined));
    return this.running;
  }
}
