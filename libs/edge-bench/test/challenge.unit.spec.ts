import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { seededRandom } from '@gpunet/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  challengeEntry,
  challengeProduct,
  commitChallenge,
  commitProduct,
  DEFAULT_CHALLENGE_POLICY,
  EMPTY_LEAF,
  freivaldsEntry,
  leafHash,
  merkleProof,
  newOpening,
  openCommitment,
  productTree,
  sizeChallenge,
  verifyMerkleProof,
  verifyOpening,
} from '../src';
import { sha256, toHex } from '../src/domain/challenge/sha256';

interface Golden {
  entries: { seed: string; matrix: 'A' | 'B'; row: number; col: number; value: number }[];
  freivalds: { seed: string; j: number; value: number }[];
  emptyLeaf: string;
  leaf: { index: number; values: number[]; hash: string };
  products: {
    seed: string;
    n: number;
    root: string;
    rowZero: number[];
    freivaldsSeed: string;
    opened: { index: number; values: number[]; proof: string[] }[];
    product: number[];
  }[];
}
const GOLDEN = JSON.parse(
  readFileSync(
    resolve(import.meta.dirname, '../../../tools/gpu-bench/fixtures/challenge-golden.json'),
    'utf8',
  ),
) as Golden;

const SEED = 'a5c3e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0ffeeddccbbaa998877665544';
const bytesOf = (rng: ReturnType<typeof seededRandom>) => (size: number) =>
  Uint8Array.from({ length: size }, () => rng.int(0, 255));

/** A commitment and its opening, honest unless a test tampers with them. */
const challenge = (seed: string, n: number, rng = seededRandom(`${seed}-${n}`)) => {
  const commitment = commitChallenge(seed, n);
  const { rows, freivaldsSeed } = newOpening(n, Math.min(8, n), bytesOf(rng));
  const reply = openCommitment(commitment, 'c-1', rows, freivaldsSeed);
  return {
    commitment,
    rows,
    freivaldsSeed,
    reply,
    input: { seed, n, root: commitment.root, rows, freivaldsSeed, reply },
  };
};

describe('derivation', () => {
  it('matches the golden vectors the Python worker checks too', () => {
    for (const v of GOLDEN.entries) expect(challengeEntry(v.seed, v.matrix, v.row, v.col)).toBe(v.value);
    for (const v of GOLDEN.freivalds) expect(freivaldsEntry(v.seed, v.j)).toBe(v.value);
    for (const p of GOLDEN.products) {
      const c = commitChallenge(p.seed, p.n);
      expect(c.root).toBe(p.root);
      expect(Array.from(c.product.subarray(0, p.n))).toEqual(p.rowZero);
      const opened = openCommitment(
        c,
        'golden',
        p.opened.map((r) => r.index),
        p.freivaldsSeed,
      );
      expect(opened.rows).toEqual(p.opened);
      expect(opened.product).toEqual(p.product);
    }
  });

  it('gives entries in {-1, 0, 1} about a third each, and Freivalds entries within ±2^20', () => {
    const counts = new Map<number, number>();
    for (let row = 0; row < 64; row++)
      for (let col = 0; col < 64; col++) {
        const v = challengeEntry(SEED, 'A', row, col);
        counts.set(v, (counts.get(v) ?? 0) + 1);
      }
    expect([...counts.keys()].sort()).toEqual([-1, 0, 1]);
    for (const c of counts.values()) expect(Math.abs(c - 4096 / 3)).toBeLessThan(100);
    for (let j = 0; j < 1000; j++) expect(Math.abs(freivaldsEntry(SEED, j))).toBeLessThanOrEqual(2 ** 20);
    // A and B are different streams of one seed.
    expect(challengeEntry(SEED, 'A', 3, 4)).not.toBe(undefined);
    const a = Array.from({ length: 64 }, (_, c) => challengeEntry(SEED, 'A', 0, c));
    const b = Array.from({ length: 64 }, (_, c) => challengeEntry(SEED, 'B', 0, c));
    expect(a).not.toEqual(b);
  });
});

describe('sha256 and the Merkle tree', () => {
  it('hashes like node:crypto at every length around the block boundaries', () => {
    const rng = seededRandom('sha');
    for (const length of [0, 1, 55, 56, 63, 64, 65, 119, 120, 1000, 16_389]) {
      const data = bytesOf(rng)(length);
      expect(toHex(sha256(data))).toBe(createHash('sha256').update(data).digest('hex'));
    }
  });

  it('uses the leaf and empty-leaf encodings of the golden vectors', () => {
    expect(toHex(EMPTY_LEAF)).toBe(GOLDEN.emptyLeaf);
    expect(toHex(leafHash(GOLDEN.leaf.index, GOLDEN.leaf.values))).toBe(GOLDEN.leaf.hash);
  });

  it('proves every row of a padded tree (48 rows → 64 leaves) and refuses another index or row', () => {
    const n = 48;
    const product = challengeProduct(SEED, n);
    const tree = productTree(product, n);
    for (let i = 0; i < n; i++) {
      const row = product.subarray(i * n, (i + 1) * n);
      const proof = merkleProof(tree, i);
      expect(proof).toHaveLength(6);
      expect(verifyMerkleProof(tree.root, i, leafHash(i, row), proof)).toBe(true);
      expect(verifyMerkleProof(tree.root, (i + 1) % n, leafHash(i, row), proof)).toBe(false);
      expect(verifyMerkleProof(tree.root, i + 64, leafHash(i, row), proof)).toBe(false);
    }
    const tampered = Array.from(product.subarray(0, n));
    tampered[3]! += 1;
    expect(verifyMerkleProof(tree.root, 0, leafHash(0, tampered), merkleProof(tree, 0))).toBe(false);
  });
});

describe('sizeChallenge', () => {
  it.each([
    // [claimed TFLOPS, n, deadline ms] with the default policy
    // 2·256³ = 33.6 MFLOP is 336 ms at 0.1 GFLOPS: minN, the slack term dominates.
    ['0.1 GFLOPS is held at minN', 0.0001, 256, 1844],
    // cbrt(50 ms × 1 GFLOPS / 2) = 292 → 288; 500 + 4 × 47.8 + 288²·4 B at 200 MB/s.
    ['1 GFLOPS (a slow CPU): 288', 0.001, 288, 693],
    // 1952 = 16 × round(1957 / 16): 49.6 ms of work.
    ['0.3 TFLOPS: 2n³ ≈ 50 ms of work', 0.3, 1952, 775],
    // 0.2 ms of work at the claim; the deadline is the allowance plus hashing 64 MiB.
    ['an H100 claim (700 TFLOPS) is held at maxN', 700, 4096, 837],
  ])('%s', (_name, claimed, n, deadline) => {
    const sized = sizeChallenge(claimed, DEFAULT_CHALLENGE_POLICY);
    expect(sized).toEqual({ n, deadlineMs: deadline });
    expect(sized.n % 16).toBe(0);
  });

  it('aims at targetMs of work at the claimed figure between the bounds, and rejects what it cannot size', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.001, max: 5000, noNaN: true }), (claimed) => {
        const { n, deadlineMs } = sizeChallenge(claimed, DEFAULT_CHALLENGE_POLICY);
        const workMs = (2 * n ** 3) / (claimed * 1e9);
        expect(n % 16).toBe(0);
        expect(n).toBeGreaterThanOrEqual(256);
        expect(n).toBeLessThanOrEqual(4096);
        // Between the bounds: the multiple of 16 nearest to the n whose 2n³ takes targetMs.
        const ideal = Math.cbrt((50 * claimed * 1e9) / 2);
        if (ideal > 256 && ideal < 4096) expect(Math.abs(n - ideal)).toBeLessThanOrEqual(8);
        expect(deadlineMs).toBeGreaterThanOrEqual(500 + 4 * workMs);
      }),
    );
    expect(() => sizeChallenge(0, DEFAULT_CHALLENGE_POLICY)).toThrow(/claimedTflops/);
    expect(() => sizeChallenge(1, { ...DEFAULT_CHALLENGE_POLICY, maxN: 100 })).toThrow(/policy/);
  });

  it('newOpening draws distinct rows below n and a fresh seed; refuses more rows than it may open', () => {
    const rng = seededRandom('opening');
    for (let t = 0; t < 50; t++) {
      const { rows, freivaldsSeed } = newOpening(16, 8, bytesOf(rng));
      expect(new Set(rows).size).toBe(8);
      expect(rows.every((r) => r >= 0 && r < 16)).toBe(true);
      expect(freivaldsSeed).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(() => newOpening(16, 17, bytesOf(rng))).toThrow(/openRows/);
    expect(() => newOpening(4096, 65, bytesOf(rng))).toThrow(/openRows/);
  });
});

describe('verifyOpening', () => {
  it('accepts an honest opening', () => {
    expect(verifyOpening(challenge(SEED, 64).input)).toEqual({ ok: true });
  });

  it('catches one wrong element of the committed product, opened or not (wrong-product)', () => {
    const n = 64;
    const honest = challengeProduct(SEED, n);
    const rng = seededRandom('one-wrong');
    for (let t = 0; t < 20; t++) {
      const wrong = honest.slice();
      const at = rng.int(0, n * n - 1);
      wrong[at]! += rng.pick([-1, 1]);
      const commitment = commitProduct(wrong, n);
      // Rows chosen away from the wrong one: only Freivalds can see it.
      const badRow = Math.floor(at / n);
      const rows = [0, 1, 2, 3].map((r) => (badRow + 1 + r) % n);
      const { freivaldsSeed } = newOpening(n, 1, bytesOf(rng));
      const reply = openCommitment(commitment, 'c', rows, freivaldsSeed);
      const verdict = verifyOpening({ seed: SEED, n, root: commitment.root, rows, freivaldsSeed, reply });
      expect(verdict).toMatchObject({ ok: false, kind: 'wrong-product' });
    }
  });

  it('catches an opened wrong row that the commitment holds (wrong-row) and one it does not (bad-proof)', () => {
    const n = 64;
    const wrong = challengeProduct(SEED, n);
    wrong[5 * n + 7]! += 2;
    const committed = commitProduct(wrong, n);
    const reply = openCommitment(committed, 'c', [5, 9], SEED);
    expect(
      verifyOpening({ seed: SEED, n, root: committed.root, rows: [5, 9], freivaldsSeed: SEED, reply }),
    ).toMatchObject({
      ok: false,
      kind: 'wrong-row',
      detail: expect.stringContaining('row 5, column 7'),
    });

    const { input, reply: honest } = challenge(SEED, n);
    const tampered = structuredClone(honest);
    tampered.rows[0]!.values[0]! += 1;
    expect(verifyOpening({ ...input, reply: tampered })).toMatchObject({ ok: false, kind: 'bad-proof' });
    const swapped = structuredClone(honest);
    swapped.rows[0]!.proof[0] = 'f'.repeat(64);
    expect(verifyOpening({ ...input, reply: swapped })).toMatchObject({ ok: false, kind: 'bad-proof' });
  });

  it('catches a product inconsistent with the opened rows (wrong-product)', () => {
    const { input, reply } = challenge(SEED, 32);
    const changed = structuredClone(reply);
    changed.product[input.rows[0]!]! += 1;
    expect(verifyOpening({ ...input, reply: changed })).toMatchObject({
      ok: false,
      kind: 'wrong-product',
      detail: expect.stringContaining(`product[${input.rows[0]}]`),
    });
  });

  it.each([
    ['a row missing', (r: Reply) => r.rows.pop(), /asked/],
    ['a row twice', (r: Reply) => (r.rows[1] = r.rows[0]!), /twice/],
    ['a short row', (r: Reply) => r.rows[0]!.values.pop(), /values: 31 values/],
    ['a fractional value', (r: Reply) => (r.rows[0]!.values[0] = 0.5), /int32/],
    ['a short proof', (r: Reply) => r.rows[0]!.proof.pop(), /proof: 4 hashes/],
    ['a short product', (r: Reply) => r.product.pop(), /product: 31 values/],
    ['an unsafe product entry', (r: Reply) => (r.product[0] = 2 ** 60), /safe integers/],
  ])('rejects %s as malformed', (_name, tamper, detail) => {
    const { input, reply } = challenge(SEED, 32);
    const changed = structuredClone(reply);
    tamper(changed);
    expect(verifyOpening({ ...input, reply: changed })).toMatchObject({
      ok: false,
      kind: 'malformed',
      detail: expect.stringMatching(detail),
    });
  });

  it('verifies every honest opening (property: any seed, size, rows and Freivalds seed)', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.constantFrom(16, 32, 48, 80),
        fc.integer({ min: 1, max: 16 }),
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        (seedBytes, n, openRows, fSeed) => {
          const seed = toHex(seedBytes);
          const commitment = commitChallenge(seed, n);
          const rng = seededRandom(toHex(fSeed));
          const { rows } = newOpening(n, openRows, bytesOf(rng));
          const freivaldsSeed = toHex(fSeed);
          const reply = openCommitment(commitment, 'p', rows, freivaldsSeed);
          expect(verifyOpening({ seed, n, root: commitment.root, rows, freivaldsSeed, reply })).toEqual({
            ok: true,
          });
        },
      ),
      { numRuns: 40 },
    );
  });
});

type Reply = ReturnType<typeof openCommitment>;

describe('challenges recorded on an H200 (challenge_worker.py on CUDA, driver 580.159.04, 2026-12-04)', () => {
  interface Recording {
    commitRequest: { challengeId: string; seed: string; n: number; dtype: string; deadlineMs: number };
    commitAnswer: { ok: boolean; root: string; edgeComputeMs: number; device: string; dtype: string };
    openRequest: { rows: number[]; freivaldsSeed: string };
    openAnswer: {
      ok: boolean;
      rows: { index: number; values: number[]; proof: string[] }[];
      product: number[];
    };
  }
  const recording = (dtype: string) =>
    JSON.parse(
      readFileSync(
        resolve(
          import.meta.dirname,
          `../../../tools/gpu-bench/fixtures/h200.challenge-${dtype}.recorded.json`,
        ),
        'utf8',
      ),
    ) as Recording;

  it.each(['bf16', 'fp16', 'fp32'])(
    'verifies the %s opening the H200 gave, committed within the deadline sized for an H200 claim',
    (dtype) => {
      const { commitRequest: commit, commitAnswer, openRequest, openAnswer } = recording(dtype);
      expect(commitAnswer).toMatchObject({ ok: true, device: 'cuda:0 NVIDIA H200', dtype });
      expect(sizeChallenge(dtype === 'fp32' ? 67 : 989.4, DEFAULT_CHALLENGE_POLICY)).toEqual({
        n: commit.n,
        deadlineMs: commit.deadlineMs,
      });
      expect(commitAnswer.edgeComputeMs).toBeLessThan(commit.deadlineMs);
      const verdict = verifyOpening({
        seed: commit.seed,
        n: commit.n,
        root: commitAnswer.root,
        rows: openRequest.rows,
        freivaldsSeed: openRequest.freivaldsSeed,
        reply: {
          outcome: 'opened',
          challengeId: commit.challengeId,
          rows: openAnswer.rows,
          product: openAnswer.product,
        },
      });
      expect(verdict).toEqual({ ok: true });
    },
    30_000,
  );
});
