import {
  type Clock,
  type Envelope,
  JobCancelled,
  JobCompleted,
  JobFailed,
  JobLaunching,
  type JobPathReport,
  OverlayPathsReported,
  type PayloadOf,
} from '@gpunet/contracts';
import type { HandlerContext, PostgresEventStore, Tx } from '@gpunet/eventing';
import { validityOf } from '../domain/links';
import { overlayHostsOf, overlayLinkMeasurements } from '../domain/overlay-links';
import {
  dropExpiredPathReports,
  forgetOverlayJob,
  holdPathReport,
  loadOverlayHosts,
  lockOverlayJob,
  replaceOverlayHosts,
  takePathReport,
} from '../infra/overlay-hosts';
import type { BenchmarkingMetrics } from './benchmarking.metrics';
import { recordLinks } from './links.recorder';

/**
 * Execution's events benchmarking learns overlay links from (stream `EXECUTION`): a launch names
 * which edge holds which overlay address, a job's path report measures its pairs, and the job's end
 * lets its hosts be forgotten.
 */
export const jobOverlayMessages = [
  JobLaunching,
  OverlayPathsReported,
  JobCompleted,
  JobFailed,
  JobCancelled,
] as const;

export interface JobOverlayDeps {
  readonly store: PostgresEventStore;
  readonly clock: Clock;
  readonly metrics: BenchmarkingMetrics;
  readonly linkTtlMs: number;
  readonly lanRttUs: number;
  /** Called after a transaction that recorded links committed. */
  readonly onLinksChanged: () => void;
}

/**
 * Turns jobs' overlay path reports into `link.measured` events (`path: 'overlay'`) between the
 * jobs' hosts, in the consumer's transaction, through the same event store, projection and
 * (coalesced) coordinate refit as the direct probes' links.
 *
 * A report names overlay addresses; which edge holds one is only known from the job's launch — and
 * execution publishes the report while it prepares the overlay, before it appends the launch, so a
 * report usually comes first. It is then held (one per job, in Postgres, in the same transaction:
 * nothing is lost, nothing is dead-lettered) and resolved in the launch's transaction; a per-job
 * advisory lock orders the two, so that neither misses the other. A held report whose launch never
 * comes is dropped once its links would be expired, or when the job ends. Input that names an
 * address the launch does not, or a job never launched, yields no link and never fails the message.
 */
export const handleJobOverlayEvent =
  (deps: JobOverlayDeps) =>
  async (envelope: Envelope, { tx }: HandlerContext): Promise<void> => {
    const { jobId } = envelope.data as { jobId: string };
    await lockOverlayJob(tx, jobId);
    switch (envelope.type) {
      case JobLaunching.type: {
        const d = envelope.data as PayloadOf<typeof JobLaunching>;
        const hosts = overlayHostsOf(d.ranks);
        // A later attempt's launch applied first keeps its hosts: this one is stale.
        if (!(await replaceOverlayHosts(tx, jobId, d.attempt, hosts))) return;
        await dropExpiredPathReports(tx, deps.clock.now().toISOString());
        const held = await takePathReport(tx, jobId);
        if (held === null) return;
        await applyReport(deps, tx, held.report, hosts, {
          correlationId: held.correlationId,
          causationId: held.eventId,
        });
        count(deps, tx, 'resolved');
        return;
      }
      case OverlayPathsReported.type: {
        const report = envelope.data as JobPathReport;
        const hosts = await loadOverlayHosts(tx, jobId);
        const cause = { correlationId: envelope.correlationId, causationId: envelope.eventId };
        if (hosts.size > 0) {
          await applyReport(deps, tx, report, hosts, cause);
          count(deps, tx, 'applied');
          return;
        }
        const { expiresAt } = validityOf(linkOptions(deps, report));
        const now = deps.clock.now().toISOString();
        await dropExpiredPathReports(tx, now);
        if (Date.parse(expiresAt) <= Date.parse(now)) {
          count(deps, tx, 'dropped-expired');
          return;
        }
        await holdPathReport(tx, envelope, report, expiresAt);
        count(deps, tx, 'held');
        return;
      }
      case JobCompleted.type:
      case JobFailed.type:
      case JobCancelled.type:
        await forgetOverlayJob(tx, jobId);
        return;
      default:
        return;
    }
  };

const linkOptions = (deps: JobOverlayDeps, report: JobPathReport) => ({
  measuredAtMs: Date.parse(report.generatedAt),
  ttlMs: deps.linkTtlMs,
  lanRttUs: deps.lanRttUs,
});

const applyReport = async (
  deps: JobOverlayDeps,
  tx: Tx,
  report: JobPathReport,
  hosts: ReadonlyMap<string, string>,
  cause: { readonly correlationId: string; readonly causationId: string },
): Promise<void> => {
  const { links, skipped } = overlayLinkMeasurements(report.pairs, hosts, linkOptions(deps, report));
  tx.onCommit(() => {
    for (const s of skipped) deps.metrics.overlayPairsSkipped.inc({ reason: s.reason });
  });
  if (links.length === 0) return;
  await recordLinks(deps, tx, links, { ...cause, occurredAt: deps.clock.now().toISOString() });
  tx.onCommit(() => {
    deps.metrics.overlayLinksMeasured.inc(links.length);
    deps.onLinksChanged();
  });
};

/** Counts a report's result once its transaction committed (a handler may run again after a rollback). */
const count = (deps: JobOverlayDeps, tx: Tx, result: 'applied' | 'held' | 'resolved' | 'dropped-expired') =>
  tx.onCommit(() => deps.metrics.overlayReports.inc({ result }));
