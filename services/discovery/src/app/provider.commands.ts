import { type Causation, streamIdOf } from '@gpunet/contracts';
import type { CommandHandler, EventingRuntime, Tx } from '@gpunet/eventing';
import {
  type ProviderCommand,
  type ProviderEvent,
  providerDecider,
  type ProviderState,
} from '../domain/provider.decider';
import { projectProviderEvents } from '../infra/provider.projection';

/**
 * Decides provider commands (the provider aggregate) and keeps the inventory projection in the
 * decision's transaction, so the projection never lags the aggregate.
 */
export class ProviderCommands {
  private readonly handler: CommandHandler<ProviderCommand, ProviderEvent, ProviderState>;

  constructor(
    eventing: EventingRuntime,
    /** Told, after commit, which providers changed (the candidate cache re-reads them). */
    private readonly changed: (providerIds: readonly string[]) => void = () => undefined,
  ) {
    this.handler = eventing.commandHandler({
      decider: providerDecider,
      effects: ({ tx, events, stored }) =>
        projectProviderEvents(
          tx,
          events.map((event, i) => ({ event, streamVersion: stored[i]!.streamVersion })),
        ),
    });
  }

  async run(command: ProviderCommand, cause: Partial<Causation>, tx: Tx): Promise<readonly ProviderEvent[]> {
    const result = await this.handler.handle(streamIdOf('provider', command.providerId), command, cause, tx);
    if (result.domainEvents.length > 0) tx.onCommit(() => this.changed([command.providerId]));
    return result.domainEvents;
  }
}
