import { z } from 'zod';

/** A size in bytes. */
export const ByteCountSchema = z.int().min(0);

/** Minor units of an asset as a decimal string (bigint-safe), e.g. `"2500000"` for 2.50 USDC. */
export const MinorAmountSchema = z.string().regex(/^(0|[1-9][0-9]{0,38})$/, 'must be minor units: digits');

/** An asset code as providers price in it: `USDC`, `GPUNET` (up to 16 characters). */
export const EdgeAssetSchema = z.string().regex(/^[A-Z][A-Z0-9]{1,15}$/, 'must be an asset code like USDC');

/** The sequence of the edge report that caused the event: older reports are recognised and ignored. */
export const ReportSequenceSchema = z.int().min(1);
