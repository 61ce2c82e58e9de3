import type { Clock, MessageRegistry } from '@gpunet/contracts';
import { CommandHandler, type PostgresEventStore, type Tx } from '@gpunet/eventing';
import {
  benchmarkStreamId,
  type ProviderBenchmarkCommand,
  type ProviderBenchmarkEvent,
  type ProviderBenchmarkState,
  providerBenchmarkDecider,
} from '../domain/provider-benchmark.decider';
import { projectBenchmarkEvents } from '../infra/projections';

/** Runs provider benchmarking commands (load → decide → append) and projects their events in the same transaction. */
export class ProviderBenchmarkCommands {
  private readonly handler: CommandHandler<
    ProviderBenchmarkCommand,
    ProviderBenchmarkEvent,
    ProviderBenchmarkState
  >;

  constructor(store: PostgresEventStore, registry: MessageRegistry, clock: Clock) {
    this.handler = new CommandHandler({ store, registry, decider: providerBenchmarkDecider, clock });
  }

  async run(
    command: ProviderBenchmarkCommand,
    meta: { correlationId: string; causationId?: string | null },
    tx: Tx,
  ): Promise<readonly ProviderBenchmarkEvent[]> {
    const result = await this.handler.handle(benchmarkStreamId(command.providerId), command, meta, tx);
    await projectBenchmarkEvents(tx, result.domainEvents);
    return result.domainEvents;
  }
}
