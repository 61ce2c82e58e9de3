/**
 * Where production code gets the time. Domain code takes the time as data; application code that
 * needs "now" takes a `Clock`, so tests can pass a `FakeClock`.
 *
 * Belongs in production code: it lives here until a shared production library owns it (see the
 * README). `libs/eventing` declares a structurally identical interface, so either satisfies the other.
 */
export interface Clock {
  now(): Date;
}

/** The real clock. */
export const systemClock: Clock = { now: () => new Date() };
