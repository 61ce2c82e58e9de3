import { describe, expect, it } from 'vitest';
import { generateApiKey } from '../src/app/api-keys';
import { configFromEnv, InvalidConfigError } from '../src/app/gateway.config';
import { GATEWAY_NODE_FLAGS, missingGatewayNodeFlags } from '../src/app/node-flags';

const base = { DATABASE_URL: 'postgres://u@h/db' };

describe('gateway configuration', () => {
  it('has defaults for everything but the database', () => {
    expect(configFromEnv(base)).toMatchObject({
      schema: 'gateway',
      port: 8080,
      bodyLimitBytes: 1024 * 1024,
      rateLimitPerSecond: 20,
      rateLimitBurst: 40,
      ssePollMs: 250,
      keyCacheTtlMs: 5_000,
      adminKey: undefined,
      defaultSubnet: null,
    });
  });

  it('takes a well-formed admin key and refuses a malformed one without echoing it', () => {
    const { key } = generateApiKey();
    expect(configFromEnv({ ...base, GATEWAY_ADMIN_KEY: key }).adminKey).toBe(key);
    const attempt = () => configFromEnv({ ...base, GATEWAY_ADMIN_KEY: 'secret-but-wrong' });
    expect(attempt).toThrow(InvalidConfigError);
    expect(attempt).toThrow(/GATEWAY_ADMIN_KEY/);
    expect(attempt).not.toThrow(/secret-but-wrong/);
  });

  it('takes a key cache TTL from 0 (off) to 5 minutes', () => {
    expect(configFromEnv({ ...base, GATEWAY_KEY_CACHE_TTL: '0s' }).keyCacheTtlMs).toBe(0);
    expect(configFromEnv({ ...base, GATEWAY_KEY_CACHE_TTL: '5m' }).keyCacheTtlMs).toBe(300_000);
    expect(() => configFromEnv({ ...base, GATEWAY_KEY_CACHE_TTL: '6m' })).toThrow(/GATEWAY_KEY_CACHE_TTL/);
  });

  it('names every bad variable', () => {
    expect(() => configFromEnv({ GATEWAY_PORT: '99999', GATEWAY_SSE_POLL: 'soon' })).toThrow(
      /DATABASE_URL.*GATEWAY_PORT.*GATEWAY_SSE_POLL|DATABASE_URL/,
    );
  });
});

describe('missingGatewayNodeFlags', () => {
  it.each([
    [[], [...GATEWAY_NODE_FLAGS]],
    [['--no-allocation-site-pretenuring'], []],
    [['--max-old-space-size=512', '--no_allocation_site_pretenuring'], []],
    // An operator who turns pretenuring back on on purpose is not warned.
    [['--allocation-site-pretenuring'], []],
    [['--trace-gc', '--max-semi-space-size=1'], [...GATEWAY_NODE_FLAGS]],
  ])('execArgv %j → %j', (execArgv, missing) => {
    expect(missingGatewayNodeFlags(execArgv)).toEqual(missing);
  });
});
