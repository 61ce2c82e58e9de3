import { describe, expect, it } from 'vitest';
import { GatewayClient } from '../src/app/api/client';
import { followJob } from '../src/app/commands/job/follow';
import { JobLiveView, renderLogChunk, toJobEvent } from '../src/app/commands/job/live-view';
import { fakeIo } from './fake-io';
import { jobFixture } from './fixtures';

const A = 'U'.padEnd(56, 'A');
const B = 'U'.padEnd(56, 'B');

/** A recorded `GET /v1/jobs/{id}/events` stream of a job placed across two providers. */
const RECORDED: [string, unknown][] = [
  [
    'job.submitted',
    {
      jobId: 'j1',
      subnetId: 'demo',
      asset: 'NTX',
      gpus: 4,
      maxPricePerGpuHour: '1000000',
      spec: { budget: { decimals: 6 } },
    },
  ],
  ['job.funded', { jobId: 'j1', escrow: '700000' }],
  ['job.queued', { jobId: 'j1', attempt: 2, reason: '4 GPUs asked; 2 free in subnet demo' }],
  [
    'job.placed',
    {
      jobId: 'j1',
      attempt: 2,
      allocations: [
        {
          name: 'ddp',
          pricePerHourMinor: '4000000',
          nodes: [
            { providerId: A, hostId: 'host-a', gpuUuids: ['g1', 'g2'], ranks: 2 },
            { providerId: B, hostId: 'host-b', gpuUuids: ['g3', 'g4'], ranks: 2 },
          ],
        },
      ],
    },
  ],
  ['job.launching', { jobId: 'j1', attempt: 1, worldSize: 4, masterAddr: '10.77.0.1', masterPort: 29500 }],
  ['job.running', { jobId: 'j1', attempt: 1, runUntil: '2030-01-01T00:10:02.000Z' }],
  [
    'usage.reported',
    {
      jobId: 'j1',
      providers: [
        { providerId: A, gpuSeconds: 60 },
        { providerId: B, gpuSeconds: 58 },
      ],
    },
  ],
  ['usage.metered', { jobId: 'j1', accrued: '131111', remaining: '568889' }],
  ['rank.exited', { jobId: 'j1', rank: 3, providerId: B, exitCode: 0, signal: null, wallSeconds: 61 }],
  [
    'job.completed',
    {
      jobId: 'j1',
      usage: [
        { providerId: A, gpuSeconds: 120 },
        { providerId: B, gpuSeconds: 118 },
      ],
    },
  ],
  [
    'job.settled',
    { jobId: 'j1', paidToProviders: '264444', subnetFees: '6611', platformFees: '6611', refunded: '422334' },
  ],
];

const sseText = (events: [string, unknown][], end = 'completed') =>
  `: stream open\n\n${events
    .map(
      ([type, data], i) =>
        `id: ${i + 1}\nevent: ${type}\ndata: ${JSON.stringify({ eventId: `e${i}`, type, occurredAt: `2030-01-01T00:00:${String(i).padStart(2, '0')}.000Z`, data })}\n\n`,
    )
    .join('')}event: end\ndata: ${JSON.stringify({ jobId: 'j1', status: end })}\n\n`;

describe('the live view', () => {
  it('renders a recorded event sequence, one line per transition', () => {
    const view = new JobLiveView();
    const lines = RECORDED.flatMap(([type, data], i) =>
      view.render(
        toJobEvent({
          event: type,
          id: String(i + 1),
          data: JSON.stringify({ type, occurredAt: `2030-01-01T00:00:0${i % 10}.000Z`, data }),
        })!,
      ),
    );
    expect(lines).toEqual([
      '00:00:00 submitted: 4 GPUs in subnet demo, ≤ 1 NTX per GPU-hour',
      '00:00:01 funded: 0.7 NTX in escrow',
      '00:00:02 queued (round 2): 4 GPUs asked; 2 free in subnet demo',
      '00:00:03 placed on UAAAAAAAAAAA… host-a (2 GPUs), UBBBBBBBBBBB… host-b (2 GPUs) — 4 NTX/hour',
      '00:00:04 launching attempt 1: 4 ranks starting (master 10.77.0.1:29500)',
      '00:00:05 running (attempt 1), until 2030-01-01T00:10:02.000Z at the latest',
      '00:00:06 usage: 118 GPU-seconds (UAAAAAAAAAAA… 60, UBBBBBBBBBBB… 58)',
      '00:00:07 cost so far: 0.131111 NTX (0.568889 NTX of the escrow left)',
      '00:00:08 rank 3 exited with code 0 (UBBBBBBBBBBB…, 61s)',
      '00:00:09 completed: 238 GPU-seconds (UAAAAAAAAAAA… 120, UBBBBBBBBBBB… 118)',
      '00:00:00 settled: paid 0.264444 NTX to providers, fees 0.013222 NTX, refunded 0.422334 NTX',
    ]);
    expect(view.status).toBe('completed');
  });

  it('says why a job failed, was unschedulable or rejected; skips malformed data; strips terminal escapes', () => {
    const view = new JobLiveView();
    const line = (type: string, data: unknown) =>
      view.render({ seq: 1, type, data: data as Record<string, unknown> });
    expect(
      line('job.failed', { reason: { code: 'RANK_FAILED', message: 'rank 2 exited 1' }, usage: [] }),
    ).toEqual(['failed: RANK_FAILED: rank 2 exited 1; no GPU time used']);
    expect(
      line('job.unschedulable', { code: 'UnschedulableAndUnresolvable', message: '8 GPUs asked; 6 match' }),
    ).toEqual(['unschedulable (UnschedulableAndUnresolvable): 8 GPUs asked; 6 match']);
    expect(line('escrow.rejected', { reason: 'insufficient-funds', message: 'needs 5 NTX' })).toEqual([
      'rejected: insufficient-funds: needs 5 NTX',
    ]);
    expect(line('job.placed', { allocations: 'nonsense' })).toEqual(['placed on  — 0 (minor units)/hour']);
    expect(toJobEvent({ event: 'job.x', id: '1', data: 'not json' })).toBeUndefined();
    expect(
      renderLogChunk({ rank: 1, stream: 'stderr', lines: ['\u001b[31mred\u001b[0m'], dropped: 2 }),
    ).toEqual(['[rank 1 stderr] �[31mred�[0m', '[rank 1 stderr] … 2 lines dropped (output too fast)']);
  });
});

const JOB = jobFixture();

/** A gateway serving the recorded job: events, its logs (held open while following), the job. */
const gateway = (events: string, job: unknown = JOB) => {
  const calls: string[] = [];
  const fetch: typeof globalThis.fetch = (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    calls.push(`${url.pathname}${url.search}`);
    const sse = (stream: ReadableStream<Uint8Array>) =>
      Promise.resolve(new Response(stream, { headers: { 'content-type': 'text/event-stream' } }));
    const text = (t: string, hold = false, signal?: AbortSignal | null) => {
      let sent = false;
      return new ReadableStream<Uint8Array>({
        pull: (c) => {
          if (!sent) {
            sent = true;
            c.enqueue(new TextEncoder().encode(t));
            return;
          }
          if (!hold) return c.close();
          return new Promise<void>((resolve) =>
            signal?.addEventListener('abort', () => (c.close(), resolve())),
          );
        },
      });
    };
    if (url.pathname.endsWith('/events')) return sse(text(events));
    if (url.pathname.endsWith('/logs') && url.searchParams.get('follow') === '1')
      return sse(
        text(
          'id: 5\nevent: log\ndata: {"rank":0,"stream":"stdout","lines":["step 1 loss 2.30"]}\n\n',
          true,
          init?.signal,
        ),
      );
    if (url.pathname.endsWith('/logs'))
      // Without follow: everything stored, the earlier chunk included (skipped as already printed).
      return sse(
        text(
          'id: 5\nevent: log\ndata: {"rank":0,"stream":"stdout","lines":["step 1 loss 2.30"]}\n\nid: 6\nevent: log\ndata: {"rank":2,"stream":"stdout","lines":["done"]}\n\nevent: end\ndata: {}\n\n',
        ),
      );
    return Promise.resolve(Response.json(job));
  };
  return { fetch, calls };
};

const target = { gateway: 'http://gw.test', apiKey: `gpn_AAAAAAAAAAAA_${'s'.repeat(43)}` };

describe('followJob', () => {
  it("merges the ranks' output into the transitions, reads the last output, ends with usage and cost", async () => {
    const g = gateway(sseText(RECORDED.slice(0, 6).concat([RECORDED[9]!])));
    const f = fakeIo({}, { fetch: g.fetch });
    const code = await followJob(new GatewayClient(target, f.io), f.io, 'j1', { json: false });
    expect(code).toBe(0);
    const out = f.stdout();
    expect(out).toContain('[rank 0] step 1 loss 2.30\n');
    expect(out.match(/step 1 loss/g)).toHaveLength(1);
    expect(out).toContain('[rank 2] done\n');
    expect(out).toContain('00:00:06 completed: 238 GPU-seconds');
    expect(
      out.endsWith('job j1 completed; 238 GPU-seconds; cost 0.277666 NTX accrued of 0.7 NTX escrow\n'),
    ).toBe(true);
  });

  it('--json: one object per line; exit 1 when the job did not complete', async () => {
    const g = gateway(sseText(RECORDED.slice(0, 2), 'failed'), {
      ...JOB,
      status: 'failed',
      reason: { code: 'X', message: 'y' },
    });
    const f = fakeIo({}, { fetch: g.fetch });
    const code = await followJob(new GatewayClient(target, f.io), f.io, 'j1', { json: true, logs: false });
    expect(code).toBe(1);
    const lines = f
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; type?: string });
    expect(lines.map((l) => `${l.kind}:${l.type ?? ''}`)).toEqual([
      'event:job.submitted',
      'event:job.funded',
      'end:',
    ]);
    expect(g.calls.some((c) => c.includes('/logs'))).toBe(false);
  });
});
