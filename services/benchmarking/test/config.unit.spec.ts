import { describe, expect, it } from 'vitest';
import { configFromEnv, InvalidConfigError } from '../src/app/benchmarking.config';

describe('configFromEnv', () => {
  it('reads durations with units and applies the defaults', () => {
    const config = configFromEnv({
      DATABASE_URL: 'postgres://localhost/test',
      PROFILE_TTL: '3d',
      PROBE_PEERS: '6',
    });
    expect(config).toMatchObject({
      schema: 'benchmarking',
      natsUrl: 'nats://127.0.0.1:4222',
      profileTtlMs: 3 * 24 * 3600_000,
      renewBeforeMs: 24 * 3600_000,
      benchmarkTimeoutMs: 15 * 60_000,
      probePeers: 6,
      throughputPeers: 1,
      probeUdpPort: 7946,
      probeTcpPort: 7947,
      probeLoopback: false,
      lanRttUs: 1000,
      allowWhileBusy: false,
    });
  });

  it('names every bad variable', () => {
    const error = (() => {
      try {
        configFromEnv({ DATABASE_URL: 'mysql://x', PROBE_INTERVAL: 'soon', SPOT_CHECK_PROBABILITY: '2' });
      } catch (e) {
        return e;
      }
    })() as InvalidConfigError;
    expect(error).toBeInstanceOf(InvalidConfigError);
    expect(error.issues.map((i) => i.path).sort()).toEqual([
      'DATABASE_URL',
      'PROBE_INTERVAL',
      'SPOT_CHECK_PROBABILITY',
    ]);
  });
});
