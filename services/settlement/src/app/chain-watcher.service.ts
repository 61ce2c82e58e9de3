import { newEventId, originOf } from '@gpunet/contracts';
import { EVENTING, type EventingRuntime } from '@gpunet/eventing';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { ReconciliationEvent } from '../domain/reconciliation';
import { ChainCursorRepository } from '../infra/chain-cursor.repository';
import { SettlementReader } from '../infra/settlement-reader';
import type { ChainAdapter } from './chain-adapter.port';
import type { SettlementConfig } from './settlement.config';
import { SettlementCommands } from './settlement.commands';
import { CHAIN_ADAPTER, SETTLEMENT_CONFIG } from './settlement.tokens';

/** What one pass over the chain did. */
export interface ChainPass {
  readonly deposits: number;
  readonly withdrawalsCompleted: number;
  readonly withdrawalsFailed: number;
  /** Subnets whose time-driven step changed something (a vote closed, a slash taken, stake released …). */
  readonly subnetsStepped: number;
  readonly mismatches: readonly ReconciliationEvent[];
}

/**
 * Settlement's side of the chain: every `chainPassMs` (and on demand) one pass credits newly
 * confirmed deposits, sends held withdrawals and resolves the ones the chain decided, runs every
 * subnet's time-driven step (votes closed, passed changes applied, held slashes taken, unbonded
 * stake and delegations released) and reconciles every asset. Every step is idempotent, so a pass interrupted
 * by a crash (or run by two replicas) is simply redone; passes of one process never overlap.
 */
@Injectable()
export class ChainWatcher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private timer: ReturnType<typeof setInterval> | undefined;
  private passing: Promise<ChainPass> | undefined;

  constructor(
    @Inject(SETTLEMENT_CONFIG) private readonly config: SettlementConfig,
    @Inject(CHAIN_ADAPTER) private readonly chain: ChainAdapter,
    @Inject(SettlementCommands) private readonly commands: SettlementCommands,
    @Inject(SettlementReader) private readonly reader: SettlementReader,
    @Inject(ChainCursorRepository) private readonly cursors: ChainCursorRepository,
    @Inject(EVENTING) private readonly eventing: EventingRuntime,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.chainPassMs <= 0) return;
    this.timer = setInterval(() => {
      this.chainPass().catch((error: unknown) =>
        this.eventing.onError(error, 'settlement chain pass failed'),
      );
    }, this.config.chainPassMs);
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.passing?.catch(() => undefined);
  }

  /** One pass over the chain now, or the one already running. */
  chainPass(): Promise<ChainPass> {
    this.passing ??= this.pass().finally(() => {
      this.passing = undefined;
    });
    return this.passing;
  }

  /**
   * Runs `change` (a synchronous change to the chain: the simulated faucet's deposit) between two
   * passes, never during one: a pass that credited deposits before the change and read custody
   * after it would report custody the ledger does not know of yet.
   */
  async betweenPasses<T>(change: () => T): Promise<T> {
    while (this.passing) await this.passing.catch(() => undefined);
    return change();
  }

  private async pass(): Promise<ChainPass> {
    const { chain } = this;
    let deposits = 0;
    for (const asset of chain.assets) {
      const found = await chain.confirmedDeposits(asset, await this.cursors.read(chain.chain, asset));
      for (const d of found.deposits) {
        // A deposit starts a chain of messages of its own, correlated by its chain transaction.
        const { events } = await this.commands.recordDeposit(
          {
            depositId: d.depositId,
            asset: d.asset,
            ownerId: d.ownerId,
            amount: d.amount.toString(),
            chain: chain.chain,
            chainTxId: d.chainTxId,
            confirmations: d.confirmations,
            confirmedAt: this.eventing.clock.now().toISOString(),
          },
          originOf(d.chainTxId),
        );
        deposits += events.length;
      }
      await this.cursors.write(chain.chain, asset, found.cursor);
    }

    let withdrawalsCompleted = 0;
    let withdrawalsFailed = 0;
    for (const w of await this.reader.openWithdrawals()) {
      await chain.submitWithdrawal(w);
      const status = await chain.withdrawalStatus(w.withdrawalId);
      if (status.state !== 'confirmed' && status.state !== 'failed') continue;
      const outcome =
        status.state === 'confirmed'
          ? { confirmed: true as const, chainTxId: status.chainTxId }
          : { confirmed: false as const, reason: status.reason };
      const { events } = await this.commands.resolveWithdrawal(w.withdrawalId, outcome);
      if (events.length === 0) continue;
      if (outcome.confirmed) withdrawalsCompleted += 1;
      else withdrawalsFailed += 1;
    }

    let subnetsStepped = 0;
    for (const subnetId of await this.reader.subnetIds()) {
      const { events } = await this.commands.stepSubnet(subnetId);
      if (events.length > 0) subnetsStepped += 1;
    }

    // The reconciliation checks of one pass share one correlation: the pass's id.
    const check = originOf(newEventId());
    const mismatches: ReconciliationEvent[] = [];
    for (const asset of chain.assets)
      mismatches.push(
        ...(await this.commands.reconcile(asset, await chain.custodyBalance(asset), chain.chain, check)),
      );
    return { deposits, withdrawalsCompleted, withdrawalsFailed, subnetsStepped, mismatches };
  }
}
