import { z } from 'zod';

/*
 * The values more than one context's messages carry: ids, money, assets, GPU classes, faults,
 * timestamps, bounded text and the fields of signed edge reports. Money is never a float: amounts
 * are integers in an asset's smallest unit, carried as decimal strings so that they survive JSON
 * (and u128-sized values) exactly; counts and seconds are safe integers.
 */

/** Ids of jobs, tenants, providers, subnets: one subject token's worth of `A-Z a-z 0-9 _ -`. */
export const EntityIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,128}$/, 'must be 1-128 characters of A-Z a-z 0-9 _ -');

/** An edge id: the edge's public user nkey (`U` + 55 base32 characters). */
export const EdgeIdSchema = z
  .string()
  .regex(/^U[A-Z2-7]{55}$/, "must be an edge id: the edge's public user nkey (U…, 56 characters)");

/** An amount of money: a non-negative integer in the asset's smallest unit, as a decimal string. */
export const MinorUnitsSchema = z
  .string()
  .regex(/^(0|[1-9][0-9]{0,37})$/, 'must be a non-negative integer in minor units, as a decimal string');

/** A signed amount (differences, corrections), same encoding with an optional `-`. */
export const SignedMinorUnitsSchema = z
  .string()
  .regex(/^(0|-?[1-9][0-9]{0,37})$/, 'must be an integer in minor units, as a decimal string');

/** An asset's ledger code: `NTX` (the Cardano native asset), `GPU` … One ledger per asset. */
export const AssetSchema = z.string().regex(/^[A-Z][A-Z0-9]{1,11}$/, 'must be an asset code like NTX');

/** A GPU class as subnets price it (`H100-80GB`, `A100-40GB`, `RTX4090`). */
export const GpuClassSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'must be a GPU class like H100-80GB');

/** Faults a provider can be blamed for; each subnet's slashing table prices them. */
export const FaultKindSchema = z.enum([
  /** The host stopped answering (heartbeats, overlay) during the job. */
  'host-lost',
  /** A rank died of a cause attributed to the provider (GPU error, OOM of the host, kill). */
  'rank-crashed',
  /** The provider's results were found wrong by verification. */
  'invalid-result',
  /** The hardware does not match what the provider claimed (benchmarks). */
  'claim-mismatch',
  /** The provider withdrew its GPUs from a running job. */
  'abandoned',
  /** The provider signed for more usage than execution observed (a dispute it lost). */
  'usage-disputed',
]);

/** An ISO 8601 instant, in UTC (`Z`) or with an offset (`+02:00`). */
export const TimestampSchema = z.iso.datetime({ offset: true });

/** An ISO 8601 instant in UTC: `Z`, no offset. */
export const UtcTimestampSchema = z.iso.datetime({ offset: false });

/** A non-empty string of at most `max` characters. */
export const text = (max: number) => z.string().min(1).max(max);

/**
 * Every signed edge message carries these. `signature` is the edge key's ed25519 signature, base64url,
 * over `signingInput(type, data)`; `sequence` grows with every signed report of an edge (across
 * restarts), so a report older than one already applied is recognised.
 */
export const signedEdgeReportFields = {
  edgeId: EdgeIdSchema,
  /** The signing key; must equal `edgeId`. */
  publicKey: EdgeIdSchema,
  sequence: z.int().min(1),
  signedAt: UtcTimestampSchema,
  signature: z.string().regex(/^[A-Za-z0-9_-]{86}$/, 'must be an ed25519 signature, base64url (86 chars)'),
};
