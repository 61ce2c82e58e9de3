import {
  EdgeDeregistered,
  EdgeInventoryReported,
  EdgePolicyReported,
  EdgeRegistered,
  EdgeReservationsReported,
  edgeIdOfSubject,
  type Envelope,
  type PayloadOf,
  verifyEdgeReport,
} from '@gpunet/contracts';
import {
  durable,
  EVENTING,
  type EventContext,
  type EventingRuntime,
  PermanentHandlerError,
} from '@gpunet/eventing';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import type { ProviderCommand } from '../domain/provider.decider';
import { touchLastSeen } from '../infra/provider.projection';
import type { DiscoveryMetrics } from './discovery.metrics';
import { DISCOVERY_METRICS, PROVIDER_COMMANDS } from './discovery.tokens';
import type { ProviderCommands } from './provider.commands';

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

/** The name of discovery's durable consumer of edge reports. */
export const EDGE_REPORTS_CONSUMER = 'discovery-edge-reports';

/**
 * Signed edge reports (EDGE stream): verifies that subject, edge id, key and signature agree
 * (refusing and counting what does not), turns each into a provider command and decides it. A
 * report is also a sign of life.
 */
@Controller()
export class EdgeReportsHandler {
  /** A batch that fails is re-run message by message: each refused message is counted once. */
  private readonly counted = new Set<string>();

  constructor(
    @Inject(PROVIDER_COMMANDS) private readonly commands: ProviderCommands,
    @Inject(DISCOVERY_METRICS) private readonly metrics: DiscoveryMetrics,
    @Inject(EVENTING) private readonly eventing: EventingRuntime,
  ) {}

  @EventPattern(edgeReportMessages, durable(EDGE_REPORTS_CONSUMER))
  async report(@Payload() data: PayloadOf<typeof EdgeRegistered>, @Ctx() ctx: EventContext): Promise<void> {
    const def = byType.get(ctx.envelope.type)!;
    const failure = verifyEdgeReport(def, edgeIdOfSubject(ctx.subject, this.eventing.prefix), data);
    if (failure !== null) {
      if (!this.counted.has(ctx.envelope.eventId)) {
        if (this.counted.size >= 10_000) this.counted.clear();
        this.counted.add(ctx.envelope.eventId);
        this.metrics.reportsRejected.inc({ reason: failure });
      }
      throw new EdgeReportRejectedError(failure, ctx.subject);
    }
    const at = this.eventing.clock.now().toISOString();
    const command = toCommand(ctx.envelope, { providerId: data.edgeId, sequence: data.sequence, at });
    await this.commands.run(command, ctx.causedBy(), ctx.tx);
    await touchLastSeen(ctx.tx, data.edgeId, at);
  }
}

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
