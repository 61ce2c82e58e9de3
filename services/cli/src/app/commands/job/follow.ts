import { ExitCode } from '../../command';
import type { GatewayClient } from '../../api/client';
import { isCliError } from '../../api/errors';
import { readEventStream, type SseEvent } from '../../api/sse';
import type { CliIo } from '../../io';
import { describeCost, TERMINAL } from './job-view';
import { JobLiveView, renderLogChunk, toJobEvent, toLogChunk } from './live-view';

export interface FollowOptions {
  readonly json: boolean;
  /** Merge the ranks' output (`[rank N] …`) into the view. Default true. */
  readonly logs?: boolean;
  /** Reconnects in a row before giving up. */
  readonly maxRetries?: number;
}

/** The exit code of a job's final status: 0 completed, 1 failed, cancelled, rejected or unschedulable. */
export const exitCodeForJob = (status: string | undefined): ExitCode =>
  status === 'completed' ? ExitCode.Ok : ExitCode.Failed;

const jobPath = (jobId: string) => `/v1/jobs/${encodeURIComponent(jobId)}`;

/**
 * The live view of `job submit --follow` / `job logs --follow`… of a job: its events (history, then
 * live) one line per transition, the ranks' output merged in, until the gateway's `end` event; then
 * the job's final state with usage and cost. `--json`: one object per line (`kind` event | log | end).
 */
export const followJob = async (
  client: GatewayClient,
  io: CliIo,
  jobId: string,
  options: FollowOptions,
): Promise<ExitCode> => {
  const view = new JobLiveView();
  const write = (kind: string, body: Record<string, unknown>) =>
    io.out(`${JSON.stringify({ kind, ...body })}\n`);
  let lastLog = -1;
  const onLog = (e: SseEvent) => {
    const chunk = toLogChunk(e);
    if (!chunk) return;
    // The logs endpoint replays from the start on reconnect: skip what was printed already.
    const seq = e.id !== undefined && /^[0-9]+$/.test(e.id) ? Number(e.id) : undefined;
    if (seq !== undefined) {
      if (seq <= lastLog) return;
      lastLog = seq;
    }
    if (options.json) write('log', { seq: seq ?? null, ...chunk });
    else for (const l of renderLogChunk(chunk)) io.out(`${l}\n`);
  };
  const logsPath = `${jobPath(jobId)}/logs`;
  const stopLogs = new AbortController();
  const logs =
    options.logs === false
      ? Promise.resolve()
      : (async () => {
          try {
            for await (const e of readEventStream(
              client,
              io,
              logsPath,
              { follow: 1 },
              {
                signal: stopLogs.signal,
                ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
              },
            ))
              onLog(e);
          } catch (e) {
            // The job's events carry on without its output: say so once.
            io.err(
              `gpunet: the job's output stream stopped: ${isCliError(e) || e instanceof Error ? e.message.trim() : String(e)}\n`,
            );
          }
        })();
  let ended: string | null | undefined;
  try {
    for await (const e of readEventStream(
      client,
      io,
      `${jobPath(jobId)}/events`,
      {},
      {
        isTerminal: (x) => x.event === 'end',
        ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
      },
    )) {
      const event = toJobEvent(e);
      if (!event) continue;
      if (event.type === 'end') {
        ended = typeof event.data['status'] === 'string' ? event.data['status'] : null;
        view.render(event);
        break;
      }
      if (event.type === 'error') continue;
      if (options.json)
        write('event', {
          seq: event.seq ?? null,
          type: event.type,
          occurredAt: event.occurredAt ?? null,
          data: event.data,
        });
      else for (const l of view.render(event)) io.out(`${l}\n`);
    }
  } finally {
    stopLogs.abort();
    await logs;
  }
  if (options.logs !== false) {
    // What the ranks wrote last may reach the log stream after the job ended: read it to the end.
    try {
      for await (const e of readEventStream(
        client,
        io,
        logsPath,
        {},
        { endIsFinal: true, isTerminal: (x) => x.event === 'end', maxRetries: 1 },
      ))
        onLog(e);
    } catch {
      // Best effort: the events are complete without it.
    }
  }
  if (ended === null) {
    io.err(`gpunet: job ${jobId} no longer exists\n`);
    return ExitCode.NotFound;
  }
  const job = await client.json('GET', jobPath(jobId), 'Job');
  if (options.json) write('end', { status: job.status, job });
  else
    io.out(
      `job ${job.jobId} ${job.status}${job.reason ? ` — ${job.reason.code}: ${job.reason.message}` : ''}; ${
        job.usage ? `${job.usage.gpuSeconds} GPU-seconds; ` : ''
      }cost ${describeCost(job)}\n`,
    );
  return TERMINAL.has(job.status) ? exitCodeForJob(job.status) : exitCodeForJob(ended ?? view.status);
};
