import { KNOWN_ASSET_DECIMALS } from '@gpunet/ensemble-spec';
import { formatAmount, gpuTime, plural, printable, shortId } from '../../api/format';
import type { SseEvent } from '../../api/sse';

/** A job event as the gateway streams it (`GET /v1/jobs/{id}/events`): the SSE id is `seq`. */
export interface JobEvent {
  readonly seq: number | undefined;
  readonly type: string;
  readonly eventId?: string;
  readonly occurredAt?: string;
  readonly data: Record<string, unknown>;
}

/** A rank's output chunk (`rank.log` contract) as `GET /v1/jobs/{id}/logs` streams it. */
export interface LogChunk {
  readonly rank: number;
  readonly stream: string;
  readonly attempt?: number;
  readonly lines: readonly string[];
  readonly dropped?: number;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The job event an SSE event carries, or undefined when it is not one (malformed data is skipped). */
export const toJobEvent = (e: SseEvent): JobEvent | undefined => {
  let json: unknown;
  try {
    json = JSON.parse(e.data);
  } catch {
    return undefined;
  }
  if (!isRecord(json)) return undefined;
  const seq = e.id !== undefined && /^[0-9]+$/.test(e.id) ? Number(e.id) : undefined;
  if (e.event === 'end' || e.event === 'error') return { seq, type: e.event, data: json };
  return {
    seq,
    type: typeof json['type'] === 'string' ? json['type'] : e.event,
    ...(typeof json['eventId'] === 'string' ? { eventId: json['eventId'] } : {}),
    ...(typeof json['occurredAt'] === 'string' ? { occurredAt: json['occurredAt'] } : {}),
    data: isRecord(json['data']) ? json['data'] : {},
  };
};

export const toLogChunk = (e: SseEvent): LogChunk | undefined => {
  if (e.event !== 'log') return undefined;
  try {
    const j = JSON.parse(e.data) as unknown;
    if (!isRecord(j) || typeof j['rank'] !== 'number' || !Array.isArray(j['lines'])) return undefined;
    return {
      rank: j['rank'],
      stream: typeof j['stream'] === 'string' ? j['stream'] : 'stdout',
      lines: j['lines'].filter((l): l is string => typeof l === 'string'),
      ...(typeof j['attempt'] === 'number' ? { attempt: j['attempt'] } : {}),
      ...(typeof j['dropped'] === 'number' ? { dropped: j['dropped'] } : {}),
    };
  } catch {
    return undefined;
  }
};

/** `[rank 0] line` (stdout) or `[rank 0 stderr] line`, one line of output each. */
export const renderLogChunk = (c: LogChunk): string[] => {
  const tag = `[rank ${c.rank}${c.stream === 'stderr' ? ' stderr' : ''}]`;
  const lines = c.lines.map((l) => `${tag} ${printable(l)}`);
  if (c.dropped) lines.push(`${tag} … ${plural(c.dropped, 'line')} dropped (output too fast)`);
  return lines;
};

const s = (v: unknown): string =>
  typeof v === 'string' ? printable(v) : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '';
const n = (v: unknown): number => (typeof v === 'number' ? v : 0);
const big = (v: unknown): bigint => (typeof v === 'string' && /^[0-9]{1,40}$/.test(v) ? BigInt(v) : 0n);
const arr = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.filter(isRecord) : []);

const usageSummary = (usage: unknown): string => {
  const providers = arr(usage);
  if (providers.length === 0) return 'no GPU time used';
  const total = providers.reduce((t, p) => t + n(p['gpuSeconds']), 0);
  return `${gpuTime(total)} (${providers.map((p) => `${shortId(s(p['providerId']))} ${n(p['gpuSeconds'])}`).join(', ')})`;
};

/**
 * The follow view's state: the job's asset and decimals (from its `job.submitted`, whose normalized
 * spec states them) to print money, and the last status to choose the exit code.
 */
export class JobLiveView {
  private asset = '';
  private decimals: number | undefined;
  /** The job's status as the stream last said (the gateway's `end` event is authoritative). */
  status: string | undefined;

  private money(minor: unknown): string {
    return `${formatAmount(typeof minor === 'string' ? minor : null, this.decimals)} ${this.asset}`.trim();
  }

  /** One line per event (none for events people need not see); `HH:MM:SS` of when it happened. */
  render(e: JobEvent): string[] {
    const line = this.describe(e);
    if (line === undefined) return [];
    const time = e.occurredAt && /T(\d\d:\d\d:\d\d)/.exec(e.occurredAt)?.[1];
    return [`${time ? `${time} ` : ''}${line}`];
  }

  private describe(e: JobEvent): string | undefined {
    const d = e.data;
    switch (e.type) {
      case 'job.submitted': {
        this.asset = s(d['asset']);
        const budget = isRecord(d['spec']) && isRecord(d['spec']['budget']) ? d['spec']['budget'] : undefined;
        this.decimals =
          typeof budget?.['decimals'] === 'number' ? budget['decimals'] : KNOWN_ASSET_DECIMALS[this.asset];
        this.status = 'submitted';
        return `submitted: ${plural(n(d['gpus']), 'GPU')} in subnet ${s(d['subnetId'])}, ≤ ${this.money(d['maxPricePerGpuHour'])} per GPU-hour`;
      }
      case 'job.funded':
        this.status = 'funded';
        return `funded: ${this.money(d['escrow'])} in escrow`;
      case 'escrow.rejected':
        this.status = 'rejected';
        return `rejected: ${s(d['reason'])}: ${s(d['message'])}`;
      case 'job.queued':
        this.status = 'queued';
        return `queued${n(d['attempt']) > 1 ? ` (round ${n(d['attempt'])})` : ''}: ${s(d['reason']) || 'waiting for capacity'}`;
      case 'job.placed': {
        this.status = 'placed';
        const allocations = arr(d['allocations']);
        const where = allocations.map((a) => {
          const nodes = arr(a['nodes']).map(
            (node) =>
              `${shortId(s(node['providerId']))} ${s(node['hostId'])} (${plural(Array.isArray(node['gpuUuids']) ? node['gpuUuids'].length : 0, 'GPU')})`,
          );
          return `${allocations.length > 1 ? `${s(a['name'])}: ` : ''}${nodes.join(', ')}`;
        });
        const price = allocations.reduce((t, a) => t + big(a['pricePerHourMinor']), 0n);
        return `placed on ${where.join('; ')} — ${this.money(price.toString())}/hour`;
      }
      case 'job.launching':
        this.status = 'launching';
        return `launching attempt ${n(d['attempt'])}: ${plural(n(d['worldSize']), 'rank')} starting (master ${s(d['masterAddr'])}:${n(d['masterPort'])})`;
      case 'job.running':
        this.status = 'running';
        return `running (attempt ${n(d['attempt'])}), until ${s(d['runUntil'])} at the latest`;
      case 'job.restarting':
        this.status = 'restarting';
        return `restarting as attempt ${n(d['attempt'])}: ${isRecord(d['reason']) ? `${s(d['reason']['code'])}: ${s(d['reason']['message'])}` : ''}`;
      case 'rank.exited':
        return `rank ${n(d['rank'])} exited ${d['signal'] ? `on signal ${s(d['signal'])}` : `with code ${s(d['exitCode'])}`} (${shortId(s(d['providerId']))}, ${n(d['wallSeconds'])}s)`;
      case 'usage.reported':
        return `usage: ${usageSummary(d['providers'])}`;
      case 'usage.metered':
        return `cost so far: ${this.money(d['accrued'])} (${this.money(d['remaining'])} of the escrow left)`;
      case 'job.cancel-requested':
        return `cancel requested${d['reason'] ? `: ${s(d['reason'])}` : ''}`;
      case 'job.completed':
        this.status = 'completed';
        return `completed: ${usageSummary(d['usage'])}`;
      case 'job.failed':
        this.status = 'failed';
        return `failed: ${isRecord(d['reason']) ? `${s(d['reason']['code'])}: ${s(d['reason']['message'])}` : 'no reason given'}; ${usageSummary(d['usage'])}`;
      case 'job.cancelled':
        this.status = 'cancelled';
        return `cancelled: ${usageSummary(d['usage'])}`;
      case 'job.unschedulable':
        this.status = 'unschedulable';
        return `unschedulable (${s(d['code'])}): ${s(d['message'])}`;
      case 'job.settled':
        return `settled: paid ${this.money(d['paidToProviders'])} to providers, fees ${this.money(
          (big(d['subnetFees']) + big(d['platformFees'])).toString(),
        )}, refunded ${this.money(d['refunded'])}`;
      case 'overlay.paths-reported':
        return 'network paths between the ranks measured (see `gpunet job get`)';
      case 'end':
        if (typeof d['status'] === 'string') this.status = d['status'];
        return undefined;
      case 'error':
        return undefined;
      default:
        return e.type;
    }
  }
}
