import { DomainError } from '@gpunet/contracts';

/*
 * Money is bigint minor units, always. On the wire it is a decimal string; no
 * amount ever passes through a JavaScript number, so nothing rounds behind our back.
 */

const DECIMAL = /^(0|-?[1-9][0-9]*)$/;

/** Parses a decimal string of minor units (as the contracts carry them). */
export const minor = (value: string): bigint => {
  if (!DECIMAL.test(value)) throw new DomainError('INVALID_AMOUNT', `not an amount in minor units: ${value}`);
  return BigInt(value);
};

/** The wire form of an amount. */
export const toWire = (value: bigint): string => value.toString();

export const BPS_DENOMINATOR = 10_000n;
export const SECONDS_PER_HOUR = 3_600n;

/** ⌈a / b⌉ for a ≥ 0, b > 0. */
export const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;

/** The smallest multiple of `step` that is ≥ `a` (a ≥ 0, step > 0). */
export const roundUpTo = (a: bigint, step: bigint): bigint => ceilDiv(a, step) * step;

/** ⌊amount × bps / 10 000⌋: a basis-point share, rounded down (the remainder stays where it was). */
export const bpsOf = (amount: bigint, bps: number): bigint => (amount * BigInt(bps)) / BPS_DENOMINATOR;

export const minOf = (a: bigint, b: bigint): bigint => (a < b ? a : b);
export const maxOf = (a: bigint, b: bigint): bigint => (a > b ? a : b);
export const sum = (values: Iterable<bigint>): bigint => {
  let total = 0n;
  for (const v of values) total += v;
  return total;
};
