/**
 * How settlement reaches a blockchain (docs/economy.md, "Chain adapters"). The ledger's `chain`
 * clearing account mirrors what the adapter holds in custody: deposits are credited once the
 * adapter reports them confirmed; withdrawals are held (pending) and posted when it reports them
 * confirmed, voided when it reports them failed; reconciliation compares custody with the ledger.
 *
 * Adapters: `SimulatedChainAdapter` (in process, for development and tests — not a chain) and, the
 * target, a Cardano adapter for NTX (a native asset) — see docs/economy.md for its design.
 */
export interface ObservedDeposit {
  /** Unique per deposit on this chain (Cardano: `<txHash>#<outputIndex>`). */
  readonly depositId: string;
  readonly asset: string;
  /** The ledger owner the deposit address (or its metadata) belongs to. */
  readonly ownerId: string;
  /** Minor units (NTX: its smallest unit). */
  readonly amount: bigint;
  readonly chainTxId: string;
  readonly confirmations: number;
}

export type WithdrawalStatus =
  | { readonly state: 'unknown' | 'pending' }
  | { readonly state: 'confirmed'; readonly chainTxId: string }
  | { readonly state: 'failed'; readonly reason: string };

export interface ChainAdapter {
  /** Name recorded with deposits and reconciliation (`simulated`, `cardano`). */
  readonly chain: string;
  /** Assets it holds custody of. */
  readonly assets: readonly string[];
  /**
   * Deposits that reached the adapter's required confirmations, after `cursor` (opaque; null: from
   * the start), in chain order, with the cursor to resume from. Settlement credits each deposit id
   * at most once, so a replay from an older cursor is harmless.
   */
  confirmedDeposits(
    asset: string,
    cursor: string | null,
  ): Promise<{ deposits: ObservedDeposit[]; cursor: string | null }>;
  /** Sends a held withdrawal. Idempotent by `withdrawalId`: settlement may call it again after a crash. */
  submitWithdrawal(withdrawal: {
    readonly withdrawalId: string;
    readonly asset: string;
    readonly amount: bigint;
    readonly destination: string;
  }): Promise<void>;
  withdrawalStatus(withdrawalId: string): Promise<WithdrawalStatus>;
  /** What the chain holds for us, confirmed (withdrawals count once confirmed). */
  custodyBalance(asset: string): Promise<bigint>;
}

/**
 * What the simulated chain offers for development deposits (`SimulatedChainAdapter`): given one,
 * settlement answers `SimulatedChainDepositRequest`. Never given with a real chain.
 */
export interface SimulatedFaucet {
  deposit(ownerId: string, asset: string, amount: bigint): string;
  mine(blocks: number): void;
  readonly confirmationsRequired: number;
}
