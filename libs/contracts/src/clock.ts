/**
 * Where application code gets the time. Domain code takes the time as data; handlers and services
 * that need "now" take a `Clock`, so tests can pass a fake one (`FakeClock` in `@gpunet/testing`).
 */
export interface Clock {
  now(): Date;
}

/** The real clock. */
export const systemClock: Clock = { now: () => new Date() };
