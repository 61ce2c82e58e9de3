import { describe, expect, it } from 'vitest';
import { configFromEnv, InvalidConfigError } from '../src/app/execution.config';
import { firstRoutableIpv4 } from '../src/infra/provider-directory';

const base = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' };

describe('execution configuration', () => {
  it('defaults every setting but the database', () => {
    expect(configFromEnv(base)).toEqual({
      databaseUrl: base.DATABASE_URL,
      schema: 'execution',
      natsUrl: 'nats://127.0.0.1:4222',
      natsSeed: null,
      prefix: '',
      policy: {
        barrierMs: 300_000,
        heartbeatTimeoutMs: 120_000,
        usageReportMs: 60_000,
        stopWaitMs: 60_000,
        usageTolerance: { seconds: 5, percent: 5 },
      },
      tickMs: 1_000,
      edgeTimeoutMs: 5_000,
      stopGraceMs: 10_000,
      network: { kind: 'host' },
    });
  });

  it('reads durations with units', () => {
    const c = configFromEnv({ ...base, EXECUTION_START_BARRIER: '90s', EXECUTION_TICK: '250ms' });
    expect(c.policy.barrierMs).toBe(90_000);
    expect(c.tickMs).toBe(250);
  });

  it('reads the usage tolerance', () => {
    const c = configFromEnv({
      ...base,
      EXECUTION_USAGE_TOLERANCE_SECONDS: '10',
      EXECUTION_USAGE_TOLERANCE_PERCENT: '2.5',
    });
    expect(c.policy.usageTolerance).toEqual({ seconds: 10, percent: 2.5 });
  });

  it.each([
    { env: { DATABASE_URL: 'mysql://x' }, path: 'DATABASE_URL' },
    { env: { ...base, EXECUTION_START_BARRIER: '5' }, path: 'EXECUTION_START_BARRIER' },
    { env: { ...base, EXECUTION_SCHEMA: 'Bad-Name' }, path: 'EXECUTION_SCHEMA' },
    { env: { ...base, EXECUTION_STOP_GRACE: '10m' }, path: 'EXECUTION_STOP_GRACE' },
    {
      env: { ...base, EXECUTION_USAGE_TOLERANCE_SECONDS: 'soon' },
      path: 'EXECUTION_USAGE_TOLERANCE_SECONDS',
    },
    { env: { ...base, EXECUTION_USAGE_TOLERANCE_PERCENT: '150' }, path: 'EXECUTION_USAGE_TOLERANCE_PERCENT' },
    {
      env: { ...base, EXECUTION_STOP_GRACE: '30s', EXECUTION_STOP_WAIT: '10s' },
      path: 'EXECUTION_STOP_WAIT',
    },
  ])('refuses a bad $path, naming it', ({ env, path }) => {
    let error: unknown;
    try {
      configFromEnv(env);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidConfigError);
    expect((error as InvalidConfigError).issues.map((i) => i.path)).toContain(path);
  });
});

describe('provider addresses', () => {
  it.each([
    {
      name: 'the first routable IPv4',
      addresses: [
        ['lo', '127.0.0.1', 'ipv4'],
        ['eth0', '10.0.0.7', 'ipv4'],
      ],
      is: '10.0.0.7',
    },
    {
      name: 'no link-local or IPv6',
      addresses: [
        ['eth0', '169.254.1.1', 'ipv4'],
        ['eth0', 'fe80::1', 'ipv6'],
      ],
      is: null,
    },
    { name: 'nothing that is not an address', addresses: [['eth0', 'not-an-ip', 'ipv4']], is: null },
  ] as const)('$name', ({ addresses, is }) => {
    const host = { addresses: addresses.map(([i, address, family]) => ({ interface: i, address, family })) };
    expect(firstRoutableIpv4(host)).toBe(is);
  });
});
