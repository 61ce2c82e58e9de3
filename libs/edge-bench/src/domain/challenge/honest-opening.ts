import { challengeProduct, freivaldsVector } from './challenge-derivation';
import { merkleProof, type MerkleTree, productTree } from './merkle';
import type { OpenedChallenge } from './verify-opening';

/** An edge's side of a challenge in TypeScript (tests and benches; the real edge runs the Python worker). */
export interface ChallengeCommitment {
  readonly n: number;
  /** Row-major n×n product the commitment is over. */
  readonly product: Int32Array;
  readonly tree: MerkleTree;
  readonly root: string;
}

/** Commits to a product: the seed's own (honest), or one a test has tampered with. */
export const commitProduct = (product: Int32Array, n: number): ChallengeCommitment => {
  const tree = productTree(product, n);
  return { n, product, tree, root: tree.root };
};

/** The honest commitment of a seed (O(n³): small n). */
export const commitChallenge = (seed: string, n: number): ChallengeCommitment =>
  commitProduct(challengeProduct(seed, n), n);

/** Opens a commitment: the rows with their proofs and C·r. */
export const openCommitment = (
  commitment: ChallengeCommitment,
  challengeId: string,
  rows: readonly number[],
  freivaldsSeed: string,
): OpenedChallenge => {
  const { n, product } = commitment;
  const r = freivaldsVector(freivaldsSeed, n);
  const cr: number[] = [];
  for (let i = 0; i < n; i++) {
    let sum = 0;
    for (let j = 0; j < n; j++) sum += product[i * n + j]! * r[j]!;
    cr.push(sum);
  }
  return {
    outcome: 'opened',
    challengeId,
    rows: rows.map((index) => ({
      index,
      values: Array.from(product.subarray(index * n, (index + 1) * n)),
      proof: merkleProof(commitment.tree, index),
    })),
    product: cr,
  };
};
