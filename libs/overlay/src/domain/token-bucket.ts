/**
 * A token bucket in bytes: `ratePerSecond` refills, up to `burst`. Pure — the time comes in — so the
 * relay's limiter is tested with plain numbers.
 */
export class TokenBucket {
  #tokens: number;
  #last: number;

  constructor(
    readonly ratePerSecond: number,
    readonly burst: number,
    nowMs: number,
  ) {
    this.#tokens = burst;
    this.#last = nowMs;
  }

  /** Takes `amount` tokens if they are there (true), or none (false). */
  take(amount: number, nowMs: number): boolean {
    if (nowMs > this.#last) {
      this.#tokens = Math.min(this.burst, this.#tokens + ((nowMs - this.#last) * this.ratePerSecond) / 1000);
      this.#last = nowMs;
    }
    if (this.#tokens < amount) return false;
    this.#tokens -= amount;
    return true;
  }

  get tokens(): number {
    return this.#tokens;
  }
}
