import type { ServiceConnection } from '@gpunet/eventing';
import {
  InvalidConfigError,
  parseServiceEnv,
  serviceConnectionOf,
  serviceEnvShape,
} from '@gpunet/service-runtime';
import { z } from 'zod';

/** The platform's economic settings (docs/economy.md). */
export interface EconomyConfig {
  /** Platform fee on top of the providers' charge, in basis points. Default 200 (2 %). */
  readonly platformFeeBps: number;
  /** `escrow.low` below this share of a job's escrow, in basis points. Default 1000 (10 %). */
  readonly lowEscrowBps: number;
  /** Least stake that creates a subnet, in minor units. Default 1 000 000 000. */
  readonly minSubnetCreationStake: bigint;
  /**
   * Assets whose ledgers hold no real value (a development or demo token): only a subnet settling
   * in one of them may allow simulated GPUs (`parameters.trust.simulatedGpus: allowed`) or
   * host-process edges (`parameters.trust.minimumIsolation: host-process`). Default none.
   */
  readonly testAssets: readonly string[];
}

export const DEFAULT_ECONOMY: EconomyConfig = {
  platformFeeBps: 200,
  lowEscrowBps: 1_000,
  minSubnetCreationStake: 1_000_000_000n,
  testAssets: [],
};

/** Settlement's settings, from the environment. */
export interface SettlementConfig extends ServiceConnection {
  readonly economy: EconomyConfig;
  /** Which chain adapter: `simulated` (development and tests). `cardano` is the target, not built yet. */
  readonly chain: 'simulated';
  /** Assets the chain adapter holds custody of. Default `NTX`. */
  readonly assets: readonly string[];
  /** Period of chain passes (deposits, withdrawals, unbonding, reconciliation); 0: only on demand. */
  readonly chainPassMs: number;
}

const bps = (fallback: number) => z.coerce.number().int().min(0).max(10_000).default(fallback);

const EnvSchema = z.object({
  ...serviceEnvShape('settlement'),
  SETTLEMENT_PLATFORM_FEE_BPS: bps(DEFAULT_ECONOMY.platformFeeBps),
  SETTLEMENT_LOW_ESCROW_BPS: bps(DEFAULT_ECONOMY.lowEscrowBps),
  SETTLEMENT_MIN_SUBNET_STAKE: z
    .string()
    .regex(/^(0|[1-9][0-9]*)$/, 'must be an amount in minor units')
    .default(DEFAULT_ECONOMY.minSubnetCreationStake.toString()),
  SETTLEMENT_CHAIN: z.enum(['simulated', 'cardano']).default('simulated'),
  SETTLEMENT_ASSETS: z
    .string()
    .regex(/^[A-Z][A-Z0-9]{1,11}(,[A-Z][A-Z0-9]{1,11})*$/, 'must be asset codes, comma-separated')
    .default('NTX'),
  SETTLEMENT_TEST_ASSETS: z
    .string()
    .regex(/^([A-Z][A-Z0-9]{1,11}(,[A-Z][A-Z0-9]{1,11})*)?$/, 'must be asset codes, comma-separated')
    .default(''),
  SETTLEMENT_CHAIN_PASS_MS: z.coerce.number().int().min(0).default(5_000),
});

export const configFromEnv = (env: Readonly<Record<string, string | undefined>>): SettlementConfig => {
  const e = parseServiceEnv('settlement', EnvSchema, env);
  if (e.SETTLEMENT_CHAIN === 'cardano')
    throw new InvalidConfigError('settlement', [
      {
        path: 'SETTLEMENT_CHAIN',
        message: 'the Cardano adapter is designed (docs/economy.md) but not built yet',
      },
    ]);
  const assets = e.SETTLEMENT_ASSETS.split(',');
  const testAssets = e.SETTLEMENT_TEST_ASSETS === '' ? [] : e.SETTLEMENT_TEST_ASSETS.split(',');
  const unheld = testAssets.filter((a) => !assets.includes(a));
  if (unheld.length > 0)
    throw new InvalidConfigError('settlement', [
      {
        path: 'SETTLEMENT_TEST_ASSETS',
        message: `${unheld.join(', ')} not among SETTLEMENT_ASSETS (${assets.join(', ')})`,
      },
    ]);
  return {
    ...serviceConnectionOf('settlement', e),
    economy: {
      platformFeeBps: e.SETTLEMENT_PLATFORM_FEE_BPS,
      lowEscrowBps: e.SETTLEMENT_LOW_ESCROW_BPS,
      minSubnetCreationStake: BigInt(e.SETTLEMENT_MIN_SUBNET_STAKE),
      testAssets,
    },
    chain: e.SETTLEMENT_CHAIN,
    assets,
    chainPassMs: e.SETTLEMENT_CHAIN_PASS_MS,
  };
};

export { InvalidConfigError };
