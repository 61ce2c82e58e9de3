import {
  EdgeBenchmarkReported,
  edgeIdOfSubject,
  EdgeLinksProbed,
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
import type { BenchmarkingMetrics } from './benchmarking.metrics';
import { BENCHMARKING_METRICS } from './benchmarking.tokens';
import { LinkMeasurements } from './link-measurements.service';
import { ProviderBenchmarks } from './provider-benchmarks.service';

/** The durable consumer of edges' signed reports (its inbox and checkpoint key). */
export const EDGE_REPORTS_CONSUMER = 'benchmarking-edge-reports';
const EDGE_REPORTS = durable(EDGE_REPORTS_CONSUMER);

/** A signed report that did not verify. Dead-lettered at once, with the reason, and counted. */
export class EdgeReportRejectedError extends PermanentHandlerError {
  constructor(reason: string, subject: string) {
    super('EDGE_REPORT_REJECTED', `edge report on ${subject} refused: ${reason}`);
  }
}

type ReportKind = 'benchmark' | 'links';

/**
 * Edges' signed reports (stream `EDGE_BENCHMARKS`), each applied in the consumer's transaction once
 * its signature and subject check out (refused ones are dead-lettered): a benchmark report is
 * verified against the provider's claim by its decider, a link report becomes measured links.
 */
@Controller()
export class EdgeReportsHandler {
  constructor(
    @Inject(EVENTING) private readonly eventing: EventingRuntime,
    @Inject(BENCHMARKING_METRICS) private readonly metrics: BenchmarkingMetrics,
    @Inject(ProviderBenchmarks) private readonly benchmarks: ProviderBenchmarks,
    @Inject(LinkMeasurements) private readonly links: LinkMeasurements,
  ) {}

  @EventPattern(EdgeBenchmarkReported, EDGE_REPORTS)
  async benchmarkReported(
    @Payload() report: PayloadOf<typeof EdgeBenchmarkReported>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    this.verify(EdgeBenchmarkReported, report, ctx, 'benchmark');
    this.counted('benchmark', await this.benchmarks.recordReport(report, ctx.causedBy(), ctx.tx));
  }

  @EventPattern(EdgeLinksProbed, EDGE_REPORTS)
  async linksProbed(
    @Payload() report: PayloadOf<typeof EdgeLinksProbed>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    this.verify(EdgeLinksProbed, report, ctx, 'links');
    this.counted('links', await this.links.recordProbeReport(report, ctx.causedBy(), ctx.tx));
  }

  private verify<D extends typeof EdgeBenchmarkReported | typeof EdgeLinksProbed>(
    def: D,
    report: PayloadOf<D>,
    ctx: EventContext,
    kind: ReportKind,
  ): void {
    const failure = verifyEdgeReport(def, edgeIdOfSubject(ctx.subject, this.eventing.prefix), report);
    if (failure === null) return;
    this.metrics.reports.inc({ kind, result: `rejected-${failure}` });
    throw new EdgeReportRejectedError(failure, ctx.subject);
  }

  private counted(kind: ReportKind, applied: boolean): void {
    this.metrics.reports.inc({ kind, result: applied ? 'applied' : 'ignored' });
  }
}
