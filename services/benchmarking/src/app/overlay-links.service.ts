import type { Causation, JobLaunching, JobPathReport, PayloadOf } from '@gpunet/contracts';
import { EVENTING, type EventingRuntime, type Tx } from '@gpunet/eventing';
import { Inject, Injectable } from '@nestjs/common';
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
} from '../infra/overlay-hosts.repository';
import type { BenchmarkingConfig } from './benchmarking.config';
import type { BenchmarkingMetrics } from './benchmarking.metrics';
import { BENCHMARKING_CONFIG, BENCHMARKING_METRICS } from './benchmarking.tokens';
import { LinkMeasurements } from './link-measurements.service';

type ReportResult = 'applied' | 'held' | 'resolved' | 'dropped-expired';

/**
 * Links from jobs' overlay path reports (`path: 'overlay'`) between the jobs' hosts, recorded like
 * the direct probes' links, in the consumer's transaction.
 *
 * A report names overlay addresses; which edge holds one is only known from the job's launch — and
 * execution publishes the report while it prepares the overlay, before it appends the launch, so a
 * report usually comes first. It is then held (one per job, in Postgres, in the same transaction:
 * nothing is lost, nothing is dead-lettered) and resolved in the launch's transaction; a per-job
 * advisory lock orders the two, so that neither misses the other. A held report whose launch never
 * comes is dropped once its links would be expired, or when the job ends. Input that names an
 * address the launch does not, or a job never launched, yields no link and never fails the message.
 */
@Injectable()
export class OverlayLinks {
  constructor(
    @Inject(EVENTING) private readonly eventing: EventingRuntime,
    @Inject(BENCHMARKING_CONFIG) private readonly config: BenchmarkingConfig,
    @Inject(BENCHMARKING_METRICS) private readonly metrics: BenchmarkingMetrics,
    @Inject(LinkMeasurements) private readonly links: LinkMeasurements,
  ) {}

  /** A job's launch names its hosts, and resolves the report held for it. */
  async launched(job: PayloadOf<typeof JobLaunching>, tx: Tx): Promise<void> {
    await lockOverlayJob(tx, job.jobId);
    const hosts = overlayHostsOf(job.ranks);
    // A later attempt's launch applied first keeps its hosts: this one is stale.
    if (!(await replaceOverlayHosts(tx, job.jobId, job.attempt, hosts))) return;
    await dropExpiredPathReports(tx, this.now());
    const held = await takePathReport(tx, job.jobId);
    if (held === null) return;
    await this.apply(tx, held.report, hosts, held.cause);
    this.count(tx, 'resolved');
  }

  /** A job's path report, caused by `cause`: applied if its job's hosts are known, else held. */
  async pathsReported(report: JobPathReport, cause: Causation, tx: Tx): Promise<void> {
    await lockOverlayJob(tx, report.jobId);
    const hosts = await loadOverlayHosts(tx, report.jobId);
    if (hosts.size > 0) {
      await this.apply(tx, report, hosts, cause);
      this.count(tx, 'applied');
      return;
    }
    const { expiresAt } = validityOf(this.linkOptions(report));
    const now = this.now();
    await dropExpiredPathReports(tx, now);
    if (Date.parse(expiresAt) <= Date.parse(now)) {
      this.count(tx, 'dropped-expired');
      return;
    }
    await holdPathReport(tx, report, cause, expiresAt);
    this.count(tx, 'held');
  }

  /** An ended job's hosts and held report are forgotten. */
  async ended(jobId: string, tx: Tx): Promise<void> {
    await lockOverlayJob(tx, jobId);
    await forgetOverlayJob(tx, jobId);
  }

  private async apply(
    tx: Tx,
    report: JobPathReport,
    hosts: ReadonlyMap<string, string>,
    cause: Causation,
  ): Promise<void> {
    const { links, skipped } = overlayLinkMeasurements(report.pairs, hosts, this.linkOptions(report));
    tx.onCommit(() => {
      for (const s of skipped) this.metrics.overlayPairsSkipped.inc({ reason: s.reason });
    });
    if (links.length === 0) return;
    await this.links.record(tx, links, cause);
    tx.onCommit(() => this.metrics.overlayLinksMeasured.inc(links.length));
  }

  private linkOptions(report: JobPathReport) {
    return {
      measuredAtMs: Date.parse(report.generatedAt),
      ttlMs: this.config.linkTtlMs,
      lanRttUs: this.config.lanRttUs,
    };
  }

  /** Counts a report's result once its transaction committed (a handler may run again after a rollback). */
  private count(tx: Tx, result: ReportResult): void {
    tx.onCommit(() => this.metrics.overlayReports.inc({ result }));
  }

  private now(): string {
    return this.eventing.clock.now().toISOString();
  }
}
