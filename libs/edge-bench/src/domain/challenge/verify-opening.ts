import type { ChallengeFailureKind, ChallengeOpenReply } from '@gpunet/contracts';
import { deriveMatrix, freivaldsVector, rowDeriver } from './challenge-derivation';
import { leafHash, treeDepth, verifyMerkleProof } from './merkle';

export type OpenedChallenge = Extract<ChallengeOpenReply, { outcome: 'opened' }>;

export type ChallengeVerdict =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly kind: Extract<ChallengeFailureKind, 'wrong-row' | 'wrong-product' | 'bad-proof' | 'malformed'>;
      readonly detail: string;
    };

const fail = (kind: Exclude<ChallengeVerdict, { ok: true }>['kind'], detail: string): ChallengeVerdict => ({
  ok: false,
  kind,
  detail,
});

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/**
 * Checks an opening against the commitment, in this order: shapes (`malformed`), each row's proof
 * against the root (`bad-proof`), each row against A[i,:]·B recomputed (`wrong-row`), the product's
 * opened entries against row·r and the whole product against A·(B·r) (`wrong-product`, Freivalds:
 * one wrong element anywhere in the committed C passes with probability about 2^-21). O(n²) work
 * plus O(openRows·n²) for the rows; all sums are exact integers in float64 (|A·(B·r)| ≤ n²·2^20).
 */
export const verifyOpening = (input: {
  seed: string;
  n: number;
  root: string;
  rows: readonly number[];
  freivaldsSeed: string;
  reply: OpenedChallenge;
}): ChallengeVerdict => {
  const { seed, n, root, rows, freivaldsSeed, reply } = input;
  // Shapes first: nothing below may index out of bounds or trust a length.
  if (reply.rows.length !== rows.length)
    return fail('malformed', `rows: ${reply.rows.length} opened, ${rows.length} asked`);
  const byIndex = new Map(reply.rows.map((r) => [r.index, r]));
  if (byIndex.size !== reply.rows.length) return fail('malformed', 'rows: an index is opened twice');
  const depth = treeDepth(n);
  for (const index of rows) {
    const row = byIndex.get(index);
    if (!row) return fail('malformed', `rows: row ${index} was asked and not opened`);
    if (row.values.length !== n)
      return fail('malformed', `rows[${index}].values: ${row.values.length} values, not ${n}`);
    if (!row.values.every((v) => Number.isInteger(v) && v >= INT32_MIN && v <= INT32_MAX))
      return fail('malformed', `rows[${index}].values: not all int32 integers`);
    if (row.proof.length !== depth)
      return fail('malformed', `rows[${index}].proof: ${row.proof.length} hashes, not ${depth}`);
  }
  if (reply.product.length !== n)
    return fail('malformed', `product: ${reply.product.length} values, not ${n}`);
  if (!reply.product.every((v) => Number.isSafeInteger(v)))
    return fail('malformed', 'product: not all safe integers');

  for (const index of rows) {
    const row = byIndex.get(index)!;
    if (!verifyMerkleProof(root, index, leafHash(index, row.values), row.proof))
      return fail('bad-proof', `row ${index} does not hash to the committed root`);
  }

  const b = deriveMatrix(seed, 'B', n);
  const aRow = rowDeriver(seed, 'A', n);
  const expected = new Float64Array(n);
  for (const index of rows) {
    const a = aRow(index);
    expected.fill(0);
    for (let k = 0; k < n; k++) {
      const aik = a[k]!;
      if (aik === 0) continue;
      const bk = b.subarray(k * n, (k + 1) * n);
      if (aik === 1) for (let j = 0; j < n; j++) expected[j]! += bk[j]!;
      else for (let j = 0; j < n; j++) expected[j]! -= bk[j]!;
    }
    const values = byIndex.get(index)!.values;
    for (let j = 0; j < n; j++)
      if (values[j] !== expected[j])
        return fail('wrong-row', `row ${index}, column ${j}: ${values[j]} where A·B has ${expected[j]}`);
  }

  const r = freivaldsVector(freivaldsSeed, n);
  for (const index of rows) {
    const values = byIndex.get(index)!.values;
    let dot = 0;
    for (let j = 0; j < n; j++) dot += values[j]! * r[j]!;
    if (reply.product[index] !== dot)
      return fail(
        'wrong-product',
        `product[${index}] is ${reply.product[index]}, the opened row gives ${dot}`,
      );
  }
  const br = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    let sum = 0;
    const bk = b.subarray(k * n, (k + 1) * n);
    for (let j = 0; j < n; j++) sum += bk[j]! * r[j]!;
    br[k] = sum;
  }
  for (let i = 0; i < n; i++) {
    const a = aRow(i);
    let sum = 0;
    for (let k = 0; k < n; k++) sum += a[k]! * br[k]!;
    if (reply.product[i] !== sum)
      return fail('wrong-product', `Freivalds: (C·r)[${i}] is ${reply.product[i]}, A·(B·r) gives ${sum}`);
  }
  return { ok: true };
};
