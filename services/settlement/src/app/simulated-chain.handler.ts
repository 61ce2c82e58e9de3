import { DomainError, type QueryResponse, SimulatedChainDepositRequest } from '@gpunet/contracts';
import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { walletOf } from '../domain/accounts';
import { SettlementReader } from '../infra/settlement-reader';
import type { ChainAdapter, SimulatedFaucet } from './chain-adapter.port';
import { ChainWatcher } from './chain-watcher.service';
import { QUERY_SERVING, type RequestOf } from './settlement-queries.handler';
import { CHAIN_ADAPTER, SIMULATED_FAUCET } from './settlement.tokens';

/**
 * Development deposits on the simulated chain (development clusters, the demo, end-to-end tests):
 * confirmed and credited before the reply. Registered only when settlement runs on the simulated
 * chain (`SettlementModuleOptions.faucet`).
 */
@Controller()
export class SimulatedChainHandler {
  constructor(
    @Inject(SIMULATED_FAUCET) private readonly faucet: SimulatedFaucet,
    @Inject(CHAIN_ADAPTER) private readonly chain: ChainAdapter,
    @Inject(ChainWatcher) private readonly watcher: ChainWatcher,
    @Inject(SettlementReader) private readonly reader: SettlementReader,
  ) {}

  @MessagePattern(SimulatedChainDepositRequest, QUERY_SERVING)
  async deposit(
    @Payload() request: RequestOf<typeof SimulatedChainDepositRequest>,
  ): Promise<QueryResponse<typeof SimulatedChainDepositRequest>> {
    if (!this.chain.assets.includes(request.asset))
      throw new DomainError(
        'ASSET_NOT_HELD',
        `asset ${request.asset} is not held by the simulated chain (${this.chain.assets.join(', ')})`,
      );
    const chainTxId = await this.watcher.betweenPasses(() => {
      const id = this.faucet.deposit(request.ownerId, request.asset, BigInt(request.amount));
      this.faucet.mine(this.faucet.confirmationsRequired);
      return id;
    });
    await this.watcher.chainPass();
    const wallet = walletOf(request.asset, request.ownerId);
    const { accounts } = await this.reader.balances({ accountIds: [wallet] });
    return { chainTxId, available: accounts[0]?.available ?? '0' };
  }
}
