import { fromHex } from './sha256';

/**
 * The challenge's inputs, derived from its seed by a counter-based hash (ADR 0070), so that the
 * verifier (TypeScript, one entry at a time) and the edge (`tools/gpu-bench/challenge_worker.py`,
 * torch integer ops over the whole matrix) compute the same values without sending them. Every step
 * is 32-bit integer arithmetic: murmur3's finaliser `fmix32` over a state folded from the seed's
 * eight little-endian words and a tag, then the row, then the column. Golden vectors in
 * `tools/gpu-bench/fixtures/challenge-golden.json` are checked on both sides.
 */

/** Tags that separate the streams of one seed: input A, input B, Freivalds' vector. */
export const CHALLENGE_TAGS = { A: 0x41, B: 0x42, r: 0x72 } as const;
export type ChallengeStream = keyof typeof CHALLENGE_TAGS;

const STATE_INIT = 0x243f6a88;
const ROW_MULTIPLIER = 0x9e3779b1;
const COL_MULTIPLIER = 0x27d4eb2f;
/** Freivalds' entries are integers in [-2^20, 2^20]. */
export const FREIVALDS_BOUND = 2 ** 20;

/** murmur3's 32-bit finaliser: a bijection on 32-bit words with full avalanche. */
export const fmix32 = (x: number): number => {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
};

/** The 32-bit state of one stream of a seed (64 lower-case hex digits). */
export const streamState = (seed: string, stream: ChallengeStream): number => {
  const bytes = fromHex(seed);
  let s = STATE_INIT;
  for (let i = 0; i < 8; i++) {
    const word =
      (bytes[i * 4]! | (bytes[i * 4 + 1]! << 8) | (bytes[i * 4 + 2]! << 16) | (bytes[i * 4 + 3]! << 24)) >>>
      0;
    s = fmix32(s ^ word);
  }
  return fmix32(s ^ CHALLENGE_TAGS[stream]);
};

export const rowKey = (state: number, row: number): number => fmix32(state ^ Math.imul(row, ROW_MULTIPLIER));
export const colTerm = (col: number): number => Math.imul(col, COL_MULTIPLIER) >>> 0;
export const entryHash = (key: number, col: number): number => fmix32(key ^ colTerm(col));

/** Entry (row, col) of input matrix A or B derived from the seed: -1, 0 or 1. */
export const challengeEntry = (seed: string, matrix: 'A' | 'B', row: number, col: number): number =>
  (entryHash(rowKey(streamState(seed, matrix), row), col) % 3) - 1;

/** Entry j of Freivalds' vector r: an integer in [-2^20, 2^20]. */
export const freivaldsEntry = (freivaldsSeed: string, j: number): number =>
  (entryHash(rowKey(streamState(freivaldsSeed, 'r'), j), 0) % (2 * FREIVALDS_BOUND + 1)) - FREIVALDS_BOUND;

/** Freivalds' vector r of length n. */
export const freivaldsVector = (freivaldsSeed: string, n: number): Float64Array => {
  const state = streamState(freivaldsSeed, 'r');
  const r = new Float64Array(n);
  for (let j = 0; j < n; j++)
    r[j] = (entryHash(rowKey(state, j), 0) % (2 * FREIVALDS_BOUND + 1)) - FREIVALDS_BOUND;
  return r;
};

/** Column terms of a size, computed once per matrix. */
const colTerms = (n: number): Uint32Array => {
  const terms = new Uint32Array(n);
  for (let c = 0; c < n; c++) terms[c] = colTerm(c);
  return terms;
};

/** Writes row `row` of input `matrix` into `out` (length n). */
export const deriveRow = (state: number, row: number, terms: Uint32Array, out: Int8Array): Int8Array => {
  const key = rowKey(state, row);
  for (let c = 0; c < terms.length; c++) out[c] = (fmix32(key ^ terms[c]!) % 3) - 1;
  return out;
};

/** Input `matrix` of the seed, row-major, n×n. */
export const deriveMatrix = (seed: string, matrix: 'A' | 'B', n: number): Int8Array => {
  const state = streamState(seed, matrix);
  const terms = colTerms(n);
  const out = new Int8Array(n * n);
  for (let row = 0; row < n; row++) deriveRow(state, row, terms, out.subarray(row * n, (row + 1) * n));
  return out;
};

/** A row deriver for one matrix of one seed (the verifier streams A's rows without storing A). */
export const rowDeriver = (seed: string, matrix: 'A' | 'B', n: number) => {
  const state = streamState(seed, matrix);
  const terms = colTerms(n);
  const out = new Int8Array(n);
  return (row: number): Int8Array => deriveRow(state, row, terms, out);
};

/**
 * The whole product C = A·B, row-major (O(n³): tests, the bench's honest edge in TypeScript, small
 * n only). Every entry is an exact integer with |c| ≤ n.
 */
export const challengeProduct = (seed: string, n: number): Int32Array => {
  const a = deriveMatrix(seed, 'A', n);
  const b = deriveMatrix(seed, 'B', n);
  const c = new Int32Array(n * n);
  for (let i = 0; i < n; i++) {
    const ci = c.subarray(i * n, (i + 1) * n);
    for (let k = 0; k < n; k++) {
      const aik = a[i * n + k]!;
      if (aik === 0) continue;
      const bk = b.subarray(k * n, (k + 1) * n);
      if (aik === 1) for (let j = 0; j < n; j++) ci[j]! += bk[j]!;
      else for (let j = 0; j < n; j++) ci[j]! -= bk[j]!;
    }
  }
  return c;
};
