import { InvalidConfigError, parseServiceEnv } from '@gpunet/service-runtime';
import { z } from 'zod';
import { DEFAULT_SETTLEMENT_CONFIG, type SettlementConfig } from './settlement.workflow';

/** Settlement's settings, from the environment. */
export interface SettlementServiceConfig {
  readonly databaseUrl: string;
  /** The service's own Postgres schema. Default `settlement`. */
  readonly schema: string;
  readonly natsUrl: string;
  /** Subject/stream namespace (tests); default ''. */
  readonly prefix: string;
  readonly economy: SettlementConfig;
  /** Which chain adapter: `simulated` (development and tests). `cardano` is the target, not built yet. */
  readonly chain: 'simulated';
  /** Assets the chain adapter holds custody of. Default `NTX`. */
  readonly assets: readonly string[];
  /** Period of chain passes (deposits, withdrawals, unbonding, reconciliation); 0: only on demand. */
  readonly chainPassMs: number;
}

const bps = (fallback: number) => z.coerce.number().int().min(0).max(10_000).default(fallback);

const EnvSchema = z.object({
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL'),
  SETTLEMENT_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/)
    .default('settlement'),
  NATS_URL: z
    .string()
    .regex(/^(nats|tls):\/\//, 'must be a nats:// URL')
    .default('nats://127.0.0.1:4222'),
  SUBJECT_PREFIX: z
    .string()
    .regex(/^([A-Za-z0-9_-]+)?$/)
    .default(''),
  SETTLEMENT_PLATFORM_FEE_BPS: bps(DEFAULT_SETTLEMENT_CONFIG.platformFeeBps),
  SETTLEMENT_LOW_ESCROW_BPS: bps(DEFAULT_SETTLEMENT_CONFIG.lowEscrowBps),
  SETTLEMENT_MIN_SUBNET_STAKE: z
    .string()
    .regex(/^(0|[1-9][0-9]*)$/, 'must be an amount in minor units')
    .default(DEFAULT_SETTLEMENT_CONFIG.minSubnetCreationStake.toString()),
  SETTLEMENT_CHAIN: z.enum(['simulated', 'cardano']).default('simulated'),
  SETTLEMENT_ASSETS: z
    .string()
    .regex(/^[A-Z][A-Z0-9]{1,11}(,[A-Z][A-Z0-9]{1,11})*$/, 'must be asset codes, comma-separated')
    .default('NTX'),
  SETTLEMENT_CHAIN_PASS_MS: z.coerce.number().int().min(0).default(5_000),
});

export const configFromEnv = (env: Readonly<Record<string, string | undefined>>): SettlementServiceConfig => {
  const e = parseServiceEnv('settlement', EnvSchema, env);
  if (e.SETTLEMENT_CHAIN === 'cardano')
    throw new InvalidConfigError('settlement', [
      {
        path: 'SETTLEMENT_CHAIN',
        message: 'the Cardano adapter is designed (docs/economy.md) but not built yet',
      },
    ]);
  return {
    databaseUrl: e.DATABASE_URL,
    schema: e.SETTLEMENT_SCHEMA,
    natsUrl: e.NATS_URL,
    prefix: e.SUBJECT_PREFIX,
    economy: {
      platformFeeBps: e.SETTLEMENT_PLATFORM_FEE_BPS,
      lowEscrowBps: e.SETTLEMENT_LOW_ESCROW_BPS,
      minSubnetCreationStake: BigInt(e.SETTLEMENT_MIN_SUBNET_STAKE),
    },
    chain: e.SETTLEMENT_CHAIN,
    assets: e.SETTLEMENT_ASSETS.split(','),
    chainPassMs: e.SETTLEMENT_CHAIN_PASS_MS,
  };
};

export { InvalidConfigError };
