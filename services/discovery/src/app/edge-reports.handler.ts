import {
  type Clock,
  EdgeDeregistered,
  EdgeInventoryReported,
  EdgePolicyReported,
  EdgeRegistered,
  EdgeReservationsReported,
  type Envelope,
  type MessageRegistry,
  type PayloadOf,
} from '@gpunet/contracts';
import {
  CommandHandler,
  type HandlerContext,
  PermanentHandlerError,
  type PostgresEventStore,
  type Tx,
} from '@gpunet/eventing';
import {
  type ProviderCommand,
  type ProviderEvent,
  type ProviderState,
  providerDecider,
} from '../domain/provider.decider';
import { projectProviderEvents } from '../infra/provider.projection';
import { edgeIdOfSubject, verifyEdgeReport } from '@gpunet/contracts';
import type { DiscoveryMetrics } from './discovery.metrics';

/** The signed reports discovery consumes from the EDGE stream. */
export const edgeReportMessages = [
  EdgeRegistered,
  EdgeInventoryReported,
  EdgePolicyReported,
  EdgeReservationsReported,
  EdgeDeregistered,
] as const;

const byType = new Map<string, (typeof edgeReportMessages)[number]>(
  edgeReportMessages.map((d) => [d.type, d]),
);

/** A signed report that did not verify. Dead-lettered at once, with the reason, and counted. */
export class EdgeReportRejectedError extends PermanentHandlerError {
  constructor(reason: string, subject: string) {
    super('EDGE_REPORT_REJECTED', `edge report on ${subject} refused: ${reason}`);
  }
}

export const providerStreamId = (providerId: string): string => `provider-${providerId}`;

/** Runs provider commands (load → decide → append) and projects their events in the same transaction. */
export class ProviderCommands {
  private readonly handler: CommandHandler<ProviderCommand, ProviderEvent, ProviderState>;

  constructor(
    store: PostgresEventStore,
    registry: MessageRegistry,
    clock: Clock,
    /** Told, after commit, which providers changed (the candidate cache re-reads them). */
    private readonly changed: (providerIds: readonly string[]) => void = () => undefined,
  ) {
    this.handler = new CommandHandler({ store, registry, decider: providerDecider, clock });
  }

  async run(
    command: ProviderCommand,
    meta: { correlationId: string; causationId?: string | null },
    tx: Tx,
  ): Promise<readonly ProviderEvent[]> {
    const result = await this.handler.handle(providerStreamId(command.providerId), command, meta, tx);
    await projectProviderEvents(
      tx,
      result.domainEvents.map((event, i) => ({ event, streamVersion: result.events[i]!.streamVersion })),
    );
    if (result.domainEvents.length > 0) tx.onCommit(() => this.changed([command.providerId]));
    return result.domainEvents;
  }
}

/**
 * Handles one signed edge report: verifies that subject, edge id, key and signature agree (refusing
 * and counting what does not), turns it into a provider command and applies it. A report is also a
 * sign of life.
 */
export const handleEdgeReport = (deps: {
  commands: ProviderCommands;
  clock: Clock;
  metrics: DiscoveryMetrics;
  prefix: string;
}) => {
  const counted = new Set<string>();
  return async (envelope: Envelope, context: HandlerContext): Promise<void> => {
    const def = byType.get(envelope.type);
    if (!def) return;
    const data = envelope.data as PayloadOf<typeof EdgeRegistered>;
    const failure = verifyEdgeReport(def, edgeIdOfSubject(context.subject, deps.prefix), data);
    if (failure !== null) {
      // A batch that fails is re-run message by message: count each refused message once.
      if (!counted.has(envelope.eventId)) {
        if (counted.size >= 10_000) counted.clear();
        counted.add(envelope.eventId);
        deps.metrics.reportsRejected.inc({ reason: failure });
      }
      throw new EdgeReportRejectedError(failure, context.subject);
    }
    const at = deps.clock.now().toISOString();
    const base = { providerId: data.edgeId, sequence: data.sequence, at };
    const command = toCommand(envelope, base);
    await deps.commands.run(
      command,
      { correlationId: envelope.correlationId, causationId: envelope.eventId },
      context.tx,
    );
    await context.tx.query(
      `UPDATE "${context.tx.schema}".providers SET last_seen_at = greatest(last_seen_at, $2::timestamptz)
       WHERE provider_id = $1 AND status <> 'deregistered'`,
      [data.edgeId, at],
    );
  };
};

const toCommand = (
  envelope: Envelope,
  base: { providerId: string; sequence: number; at: string },
): ProviderCommand => {
  switch (envelope.type) {
    case EdgeRegistered.type: {
      const d = envelope.data as PayloadOf<typeof EdgeRegistered>;
      return {
        type: 'Register',
        ...base,
        publicKey: d.publicKey,
        name: d.name,
        agentVersion: d.agentVersion,
        host: d.host,
        inventory: d.inventory,
        policy: d.policy,
      };
    }
    case EdgeInventoryReported.type: {
      const d = envelope.data as PayloadOf<typeof EdgeInventoryReported>;
      return { type: 'ReportInventory', ...base, host: d.host, inventory: d.inventory };
    }
    case EdgePolicyReported.type:
      return {
        type: 'ReportPolicy',
        ...base,
        policy: (envelope.data as PayloadOf<typeof EdgePolicyReported>).policy,
      };
    case EdgeReservationsReported.type:
      return {
        type: 'ReportReservations',
        ...base,
        reservations: (envelope.data as PayloadOf<typeof EdgeReservationsReported>).reservations,
      };
    default:
      return {
        type: 'Deregister',
        ...base,
        reason: (envelope.data as PayloadOf<typeof EdgeDeregistered>).reason,
      };
  }
};
