import { fromHex, sha256, toHex } from './sha256';

/**
 * The commitment to a product's rows (ADR 0070): leaf i = sha256(0x00 ‖ u32le(i) ‖ row i as int32
 * LE), node = sha256(0x01 ‖ left ‖ right), the leaves padded to a power of two with EMPTY_LEAF =
 * sha256(0x00) (shorter than any real leaf's input, so it is no row). Proofs are the sibling hashes
 * from the leaf up.
 */

export const EMPTY_LEAF: Uint8Array = sha256(new Uint8Array([0x00]));

/** The leaf of row `index` (values must be integers within int32). */
export const leafHash = (index: number, values: ArrayLike<number>): Uint8Array => {
  const bytes = new Uint8Array(1 + 4 + values.length * 4);
  const view = new DataView(bytes.buffer);
  bytes[0] = 0x00;
  view.setUint32(1, index, true);
  for (let j = 0; j < values.length; j++) view.setInt32(5 + j * 4, values[j]!, true);
  return sha256(bytes);
};

export const nodeHash = (left: Uint8Array, right: Uint8Array): Uint8Array => {
  const bytes = new Uint8Array(65);
  bytes[0] = 0x01;
  bytes.set(left, 1);
  bytes.set(right, 33);
  return sha256(bytes);
};

/** Levels of the tree, leaves (padded) first, the root last. */
export interface MerkleTree {
  readonly levels: readonly (readonly Uint8Array[])[];
  readonly root: string;
}

export const treeDepth = (leaves: number): number => Math.ceil(Math.log2(Math.max(1, leaves)));

export const buildMerkleTree = (leaves: readonly Uint8Array[]): MerkleTree => {
  const width = 2 ** treeDepth(leaves.length);
  let level: Uint8Array[] = [...leaves];
  while (level.length < width) level.push(EMPTY_LEAF);
  const levels: Uint8Array[][] = [level];
  while (level.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(nodeHash(level[i]!, level[i + 1]!));
    levels.push(next);
    level = next;
  }
  return { levels, root: toHex(level[0]!) };
};

/** The tree over the rows of a row-major n×n product. */
export const productTree = (product: Int32Array, n: number): MerkleTree =>
  buildMerkleTree(Array.from({ length: n }, (_, i) => leafHash(i, product.subarray(i * n, (i + 1) * n))));

export const merkleProof = (tree: MerkleTree, index: number): string[] =>
  tree.levels.slice(0, -1).map((level, depth) => toHex(level[(index >> depth) ^ 1]!));

/** Whether `leaf` at `index` with `proof` hashes to `root` (hex). */
export const verifyMerkleProof = (
  root: string,
  index: number,
  leaf: Uint8Array,
  proof: readonly string[],
): boolean => {
  let node = leaf;
  for (let depth = 0; depth < proof.length; depth++) {
    const sibling = fromHex(proof[depth]!);
    node = (index >> depth) & 1 ? nodeHash(sibling, node) : nodeHash(node, sibling);
  }
  return index >> proof.length === 0 && toHex(node) === root;
};
