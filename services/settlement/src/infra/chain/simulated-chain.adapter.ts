import type { ChainAdapter, ObservedDeposit, WithdrawalStatus } from '../../app/chain-adapter.port';

interface SimulatedDeposit extends Omit<ObservedDeposit, 'confirmations'> {
  readonly height: number;
}

interface SimulatedWithdrawal {
  readonly withdrawalId: string;
  readonly asset: string;
  readonly amount: bigint;
  readonly destination: string;
  readonly height: number;
  readonly chainTxId: string;
}

export interface SimulatedChainOptions {
  readonly assets: readonly string[];
  /** Blocks before a deposit or withdrawal counts as confirmed. Default 3. */
  readonly confirmationsRequired?: number;
}

/**
 * A chain **simulated in process**, for development and tests only: it holds no real funds and
 * talks to no network. Deposits and withdrawals are recorded at the current block height and
 * confirm after `confirmationsRequired` blocks, advanced by `mine()`. `refuse(destination)` makes
 * the chain reject withdrawals to an address; `drift()` moves custody behind the ledger's back, so
 * that tests can prove reconciliation notices.
 */
export class SimulatedChainAdapter implements ChainAdapter {
  readonly chain = 'simulated';
  readonly assets: readonly string[];
  private readonly required: number;
  private height = 0;
  private txCounter = 0;
  private readonly deposits: SimulatedDeposit[] = [];
  private readonly withdrawals = new Map<string, SimulatedWithdrawal>();
  private readonly refused = new Set<string>();
  private readonly drifts = new Map<string, bigint>();

  constructor(options: SimulatedChainOptions) {
    this.assets = [...options.assets];
    this.required = options.confirmationsRequired ?? 3;
  }

  /** Someone sends `amount` to `ownerId`'s deposit address. Returns the transaction id. */
  deposit(ownerId: string, asset: string, amount: bigint): string {
    const chainTxId = this.nextTxId();
    this.deposits.push({
      depositId: `${chainTxId}#0`,
      asset,
      ownerId,
      amount,
      chainTxId,
      height: this.height,
    });
    return chainTxId;
  }

  /** Blocks a deposit or withdrawal needs to count as confirmed. */
  get confirmationsRequired(): number {
    return this.required;
  }

  /** Advances the chain by `blocks`. */
  mine(blocks = 1): void {
    this.height += blocks;
  }

  /** Withdrawals to `destination` fail (an invalid address, say). */
  refuse(destination: string): void {
    this.refused.add(destination);
  }

  /** Custody changes without the ledger knowing (a theft, a bug): reconciliation must notice. */
  drift(asset: string, delta: bigint): void {
    this.drifts.set(asset, (this.drifts.get(asset) ?? 0n) + delta);
  }

  confirmedDeposits(
    asset: string,
    cursor: string | null,
  ): Promise<{ deposits: ObservedDeposit[]; cursor: string | null }> {
    const from = cursor === null ? 0 : Number(cursor);
    const confirmed: ObservedDeposit[] = [];
    let next = from;
    // Chain order; stop at the first unconfirmed deposit so the cursor never skips one.
    for (let i = from; i < this.deposits.length; i++) {
      const d = this.deposits[i]!;
      const confirmations = this.height - d.height;
      if (confirmations < this.required) break;
      next = i + 1;
      if (d.asset === asset) confirmed.push({ ...d, confirmations });
    }
    return Promise.resolve({ deposits: confirmed, cursor: String(next) });
  }

  submitWithdrawal(w: {
    withdrawalId: string;
    asset: string;
    amount: bigint;
    destination: string;
  }): Promise<void> {
    if (!this.withdrawals.has(w.withdrawalId))
      this.withdrawals.set(w.withdrawalId, { ...w, height: this.height, chainTxId: this.nextTxId() });
    return Promise.resolve();
  }

  withdrawalStatus(withdrawalId: string): Promise<WithdrawalStatus> {
    const w = this.withdrawals.get(withdrawalId);
    if (!w) return Promise.resolve({ state: 'unknown' });
    if (this.refused.has(w.destination))
      return Promise.resolve({ state: 'failed', reason: 'destination refused by the chain' });
    if (this.height - w.height < this.required) return Promise.resolve({ state: 'pending' });
    return Promise.resolve({ state: 'confirmed', chainTxId: w.chainTxId });
  }

  custodyBalance(asset: string): Promise<bigint> {
    let total = this.drifts.get(asset) ?? 0n;
    for (const d of this.deposits)
      if (d.asset === asset && this.height - d.height >= this.required) total += d.amount;
    for (const w of this.withdrawals.values()) {
      if (w.asset === asset && !this.refused.has(w.destination) && this.height - w.height >= this.required)
        total -= w.amount;
    }
    return Promise.resolve(total);
  }

  private nextTxId(): string {
    this.txCounter += 1;
    return `sim-tx-${this.txCounter}`;
  }
}
