import type { PlacementExplanationRecord } from '@gpunet/contracts';
import type { PlacementExplanation } from '@gpunet/scheduling';
import type { JobPlacementCommand, JobPlacementEvent, JobPlacementState } from './job-placement.decider';

export type ExplanationOutcome = PlacementExplanationRecord['outcome'];
export type PlacementOutcome = Extract<ExplanationOutcome, { kind: 'placement' }>;
export type ExplainedStatus = PlacementExplanationRecord['status'];

/** What one decision writes to the explanation projection. */
export type ExplanationWrite =
  | {
      readonly kind: 'record';
      readonly status: ExplainedStatus;
      readonly attempt: number;
      readonly explainedAt: string;
      readonly outcome: ExplanationOutcome;
    }
  | { readonly kind: 'status'; readonly status: ExplainedStatus };

const minor = (n: number): string => String(Math.max(0, Math.round(n)));
const signedMinor = (n: number): string => String(Math.round(n) || 0);
const cut = (s: string, max: number): string => s.slice(0, max);

/** A figure's age at the decision, ms; null when undated. */
const ageOf = (measuredAt: string | null, at: number): number | null =>
  measuredAt === null ? null : Math.max(0, at - Date.parse(measuredAt));

/**
 * The core's explanation as the projection keeps it (the contract's shape): prices as minor-unit
 * strings, each dated figure with its age at the decision, texts cut to the contract's bounds.
 */
export const placementOutcome = (explanation: PlacementExplanation, at: string): PlacementOutcome => {
  const now = Date.parse(at);
  return {
    kind: 'placement',
    allocations: explanation.allocations.slice(0, 64).map((a) => ({
      name: a.placement.name,
      gpuCount: a.placement.gpuCount,
      nodes: a.placement.nodes.map((n) => ({
        providerId: n.providerId,
        hostId: n.hostId,
        siteId: n.siteId,
        gpuUuids: [...n.gpuUuids],
        ranks: n.ranks,
      })),
      sites: a.placement.sites,
      prediction: { ...a.placement.prediction },
      pricePerHourMinor: minor(a.placement.pricePerHourMinor),
      strategy: a.strategy,
      stepTimeTolerance: a.stepTimeTolerance,
      gpus: a.gpus.map((g) => ({ ...g, ageMs: ageOf(g.measuredAt, now) })),
      gpusOmitted: a.gpusOmitted,
      links: a.links.map((l) => ({ ...l, ageMs: ageOf(l.measuredAt, now) })),
      linksOmitted: a.linksOmitted,
      alternatives: a.alternatives.map((alt) => ({
        nodes: alt.nodes.map((n) => ({ ...n })),
        sites: alt.sites,
        gpuCount: alt.gpuCount,
        prediction: { ...alt.prediction },
        pricePerHourMinor: minor(alt.pricePerHourMinor),
        lostOn: alt.lostOn,
        message: cut(alt.message, 1024),
        stepUsDelta: alt.stepUsDelta,
        priceDeltaMinor: signedMinor(alt.priceDeltaMinor),
      })),
    })),
  };
};

const STATUS: Partial<Record<JobPlacementState['status'], ExplainedStatus>> = {
  queued: 'queued',
  waiting: 'waiting',
  reserving: 'reserving',
  placed: 'placed',
  unschedulable: 'unschedulable',
  cancelled: 'cancelled',
};

/**
 * What a committed decision writes to the explanation projection: a round started → the placement's
 * explanation (which the engine computed for it); parked or declared unschedulable → the reasons
 * the decision carries; any other change of status → the status only. Null: nothing to write.
 */
export const explanationWrite = (
  command: JobPlacementCommand,
  events: readonly JobPlacementEvent[],
  before: JobPlacementState,
  after: JobPlacementState,
  placement: PlacementOutcome | undefined,
): ExplanationWrite | null => {
  const status = STATUS[after.status];
  if (status === undefined) return null;
  const record = (outcome: ExplanationOutcome, explainedAt: string): ExplanationWrite => ({
    kind: 'record',
    status,
    attempt: after.attempt,
    explainedAt,
    outcome,
  });
  // The last event that explains decides (a failure after a round's start within one decision wins).
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    switch (e.type) {
      case 'RoundStarted':
        if (placement !== undefined) return record(placement, e.data.at);
        break;
      case 'DeclaredUnschedulable':
        return record(
          {
            kind: 'failure',
            code: e.data.code,
            allocation: e.data.allocation === null ? null : cut(e.data.allocation, 128),
            message: cut(e.data.message, 2048),
            reasons: failureReasons(e.data.reasons),
          },
          e.data.at,
        );
      case 'ParkedForCapacity':
        return record(
          {
            kind: 'failure',
            code: 'Unschedulable',
            allocation:
              command.type === 'RecordScheduleFailure' && command.allocation !== null
                ? cut(command.allocation, 128)
                : null,
            message: cut(e.data.message, 2048),
            reasons: failureReasons(e.data.reasons),
          },
          e.data.at,
        );
      case 'Queued':
      case 'ReservationAccepted':
      case 'ReservationDeclined':
      case 'RoundAborted':
      case 'Placed':
      case 'WaitExpired':
      case 'Cancelled':
      case 'LateReservationReleased':
        break;
    }
  }
  return after.status === before.status ? null : { kind: 'status', status };
};

const failureReasons = (
  reasons: Extract<JobPlacementEvent, { type: 'DeclaredUnschedulable' }>['data']['reasons'],
): Extract<ExplanationOutcome, { kind: 'failure' }>['reasons'] =>
  reasons.slice(0, 64).map((r) => ({
    plugin: cut(r.plugin, 128),
    reason: cut(r.reason, 128),
    message: cut(r.message, 1024),
    gpus: r.gpus,
  }));
