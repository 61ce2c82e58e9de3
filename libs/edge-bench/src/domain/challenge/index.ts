// The challenge core (ADR 0070): inputs derived from a seed, the Merkle commitment, sizing, and the
// verifier's check of an opening. Pure: the verifier runs it in benchmarking, the edge's worker is
// its Python twin (tools/gpu-bench/challenge_worker.py).
export {
  challengeEntry,
  challengeProduct,
  deriveMatrix,
  FREIVALDS_BOUND,
  freivaldsEntry,
  freivaldsVector,
} from './challenge-derivation';
export {
  type ChallengePolicy,
  DEFAULT_CHALLENGE_POLICY,
  newOpening,
  sizeChallenge,
} from './challenge-policy';
export { type ChallengeCommitment, commitChallenge, commitProduct, openCommitment } from './honest-opening';
export {
  buildMerkleTree,
  EMPTY_LEAF,
  leafHash,
  merkleProof,
  type MerkleTree,
  nodeHash,
  productTree,
  verifyMerkleProof,
} from './merkle';
export { sha256, toHex } from './sha256';
export { type ChallengeVerdict, type OpenedChallenge, verifyOpening } from './verify-opening';
