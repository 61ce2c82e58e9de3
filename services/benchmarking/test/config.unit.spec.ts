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

  it('reads the challenge settings: on by default, the library’s policy unless overridden', () => {
    const base = { DATABASE_URL: 'postgres://localhost/test' };
    expect(configFromEnv(base)).toMatchObject({
      challengesEnabled: true,
      challengeTickIntervalMs: 60_000,
      challengeIdleIntervalMs: 6 * 3600_000,
      challengeLateGraceMs: 5_000,
      challengeOpenTimeoutMs: 10_000,
      maxChallengesPerTick: 50,
      challengePolicy: {},
    });
    expect(
      configFromEnv({
        ...base,
        BENCHMARKING_CHALLENGES: 'false',
        BENCHMARKING_CHALLENGE_IDLE_INTERVAL: '2h',
        BENCHMARKING_CHALLENGE_MAX_N: '4096',
        BENCHMARKING_CHALLENGE_ALLOWANCE: '250ms',
        BENCHMARKING_CHALLENGE_SLACK: '3',
        BENCHMARKING_CHALLENGE_OPEN_ROWS: '8',
      }),
    ).toMatchObject({
      challengesEnabled: false,
      challengeIdleIntervalMs: 2 * 3600_000,
      challengePolicy: { maxN: 4096, allowanceMs: 250, slack: 3, openRows: 8 },
    });
  });

  it('names every bad challenge variable', () => {
    const error = (() => {
      try {
        configFromEnv({
          DATABASE_URL: 'postgres://localhost/test',
          BENCHMARKING_CHALLENGES: 'yes',
          BENCHMARKING_CHALLENGE_IDLE_INTERVAL: 'often',
          BENCHMARKING_CHALLENGE_MAX_N: '1000',
          BENCHMARKING_CHALLENGE_ALLOWANCE: 'a bit',
          BENCHMARKING_CHALLENGE_SLACK: '0.5',
          BENCHMARKING_CHALLENGE_OPEN_ROWS: '65',
        });
      } catch (e) {
        return e;
      }
    })() as InvalidConfigError;
    expect(error).toBeInstanceOf(InvalidConfigError);
    expect(error.issues.map((i) => i.path).sort()).toEqual([
      'BENCHMARKING_CHALLENGES',
      'BENCHMARKING_CHALLENGE_ALLOWANCE',
      'BENCHMARKING_CHALLENGE_IDLE_INTERVAL',
      'BENCHMARKING_CHALLENGE_MAX_N',
      'BENCHMARKING_CHALLENGE_OPEN_ROWS',
      'BENCHMARKING_CHALLENGE_SLACK',
    ]);
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
