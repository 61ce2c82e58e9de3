import { describe, expect, it } from 'vitest';
import { configFromEnv, InvalidConfigError } from '../src/app/settlement.config';
import { SimulatedChainAdapter } from '../src/infra/chain/simulated-chain.adapter';

describe('the simulated chain (development and tests only)', () => {
  it('reports deposits once confirmed, in chain order, resuming from its cursor', async () => {
    const chain = new SimulatedChainAdapter({ assets: ['NTX', 'GPU'], confirmationsRequired: 2 });
    chain.deposit('a', 'NTX', 5n);
    chain.mine(1);
    chain.deposit('b', 'GPU', 7n);
    expect((await chain.confirmedDeposits('NTX', null)).deposits).toEqual([]);
    chain.mine(1);
    const first = await chain.confirmedDeposits('NTX', null);
    expect(first.deposits.map((d) => [d.ownerId, d.amount, d.confirmations])).toEqual([['a', 5n, 2]]);
    // The GPU deposit is not confirmed yet: the cursor stops before it.
    expect((await chain.confirmedDeposits('GPU', first.cursor)).deposits).toEqual([]);
    chain.mine(1);
    expect((await chain.confirmedDeposits('GPU', first.cursor)).deposits.map((d) => d.ownerId)).toEqual([
      'b',
    ]);
    expect(await chain.custodyBalance('NTX')).toBe(5n);
  });

  it('confirms or refuses withdrawals, idempotently, and drifts when told to', async () => {
    const chain = new SimulatedChainAdapter({ assets: ['NTX'], confirmationsRequired: 1 });
    chain.deposit('a', 'NTX', 100n);
    chain.mine(1);
    await chain.submitWithdrawal({ withdrawalId: 'w1', asset: 'NTX', amount: 30n, destination: 'addr1' });
    await chain.submitWithdrawal({ withdrawalId: 'w1', asset: 'NTX', amount: 30n, destination: 'addr1' });
    chain.refuse('bad');
    await chain.submitWithdrawal({ withdrawalId: 'w2', asset: 'NTX', amount: 10n, destination: 'bad' });
    expect(await chain.withdrawalStatus('w1')).toEqual({ state: 'pending' });
    chain.mine(1);
    expect(await chain.withdrawalStatus('w1')).toMatchObject({ state: 'confirmed' });
    expect(await chain.withdrawalStatus('w2')).toMatchObject({ state: 'failed' });
    expect(await chain.withdrawalStatus('nope')).toEqual({ state: 'unknown' });
    expect(await chain.custodyBalance('NTX')).toBe(70n);
    chain.drift('NTX', -1n);
    expect(await chain.custodyBalance('NTX')).toBe(69n);
  });
});

describe('configuration from the environment', () => {
  it('has defaults for everything but the database', () => {
    const config = configFromEnv({ DATABASE_URL: 'postgres://db/settlement' });
    expect(config).toMatchObject({
      schema: 'settlement',
      natsUrl: 'nats://127.0.0.1:4222',
      natsSeed: null,
      chain: 'simulated',
      assets: ['NTX'],
      economy: { platformFeeBps: 200, lowEscrowBps: 1000, testAssets: [] },
    });
  });

  it('names the test assets (no real value) among the assets it holds', () => {
    const config = configFromEnv({
      DATABASE_URL: 'postgres://db',
      SETTLEMENT_ASSETS: 'NTX,DEMO',
      SETTLEMENT_TEST_ASSETS: 'DEMO',
    });
    expect(config.economy.testAssets).toEqual(['DEMO']);
    expect(() => configFromEnv({ DATABASE_URL: 'postgres://db', SETTLEMENT_TEST_ASSETS: 'DEMO' })).toThrow(
      /SETTLEMENT_TEST_ASSETS.*DEMO not among SETTLEMENT_ASSETS/s,
    );
    expect(() => configFromEnv({ DATABASE_URL: 'postgres://db', SETTLEMENT_TEST_ASSETS: 'demo' })).toThrow(
      /SETTLEMENT_TEST_ASSETS/,
    );
  });

  it('refuses what it cannot run, naming the variable', () => {
    expect(() => configFromEnv({})).toThrow(InvalidConfigError);
    expect(() =>
      configFromEnv({ DATABASE_URL: 'postgres://db', SETTLEMENT_PLATFORM_FEE_BPS: '10001' }),
    ).toThrow(/SETTLEMENT_PLATFORM_FEE_BPS/);
    expect(() => configFromEnv({ DATABASE_URL: 'postgres://db', SETTLEMENT_CHAIN: 'cardano' })).toThrow(
      /not built yet/,
    );
  });
});
