import { buildEnvelope, JobFunded, JobPlaced } from '@gpunet/contracts';
import { eventually } from '@gpunet/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayHarness, startHarness } from './support/harness';
import { VALID_SPEC_YAML } from './support/fixtures';

const funded = (jobId: string) =>
  buildEnvelope(
    JobFunded,
    {
      jobId,
      tenantId: 'tenant-order',
      subnetId: 'ai',
      subnetVersion: 1,
      asset: 'NTX',
      gpus: 4,
      gpuClasses: ['H100'],
      maxDurationSeconds: 7200,
      escrow: '21000000',
      maxCharge: '20000000',
      subnetFee: '500000',
      platformFee: '500000',
      terms: {
        pricing: { mode: 'fixed', pricePerGpuHour: { H100: '2500000' } },
        maxPricePerGpuHour: '2500000',
        billingIncrementSeconds: 60,
        minimumChargeSeconds: 0,
        subnetFeeBps: 250,
        platformFeeBps: 250,
        lowEscrowBps: 1000,
        slashing: {},
      },
      fundedAt: '2030-01-01T00:00:00.000Z',
    },
    { streamId: `job-${jobId}` },
  );

const placed = (jobId: string) =>
  buildEnvelope(
    JobPlaced,
    {
      jobId,
      tenantId: 'tenant-order',
      asset: 'NTX',
      allocations: [
        {
          name: 'trainer',
          gpuCount: 4,
          nodes: [
            {
              providerId: 'U'.padEnd(56, 'A'),
              hostId: 'host-a',
              gpuUuids: ['GPU-1', 'GPU-2', 'GPU-3', 'GPU-4'],
              reservationId: 'r-a',
              ranks: 4,
            },
          ],
          predictedStepUs: 1000,
          pricePerHourMinor: '10000000',
        },
      ],
      holdUntil: '2030-01-01T00:05:00.000Z',
      attempt: 1,
      at: '2030-01-01T00:00:01.000Z',
    },
    { streamId: `job-${jobId}` },
  );

/** A promise and the function that resolves it. */
const gate = (): { wait: Promise<void>; open: () => void } => {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
};

/**
 * The three projection consumers write a job's history in concurrent transactions. A reader that
 * resumes after the highest number it has seen must never pass an event that commits later: the
 * per-job sequence is taken under the job's row lock, so numbers are handed out in commit order.
 */
describe('job event stream under concurrent projection transactions', () => {
  let h: GatewayHarness;
  let key: string;

  beforeAll(async () => {
    h = await startHarness('gateway_order');
    key = await h.keyFor('tenant-order', ['read', 'submit'], 'ai');
  });

  afterAll(async () => {
    await h?.close();
  });

  const submit = async (): Promise<string> => {
    const res = await fetch(`${h.url}/v1/jobs`, {
      method: 'POST',
      body: VALID_SPEC_YAML,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/yaml' },
    });
    expect(res.status).toBe(202);
    return ((await res.json()) as { jobId: string }).jobId;
  };

  it('delivers both events, in commit order, when the later transaction would commit first', async () => {
    const jobId = await submit();
    const other = await submit();
    const {
      eventing: { db },
      projection,
    } = h;

    // The SSE reader is open (and has sent job.submitted) before either transaction starts.
    const abort = new AbortController();
    const res = await fetch(`${h.url}/v1/jobs/${jobId}/events`, {
      headers: { authorization: `Bearer ${key}` },
      signal: abort.signal,
    });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    const pump = (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          text += value;
        }
      } catch {
        // aborted at the end of the test
      }
    })();
    const frames = () =>
      [...text.matchAll(/^id: (\d+)\nevent: (.+)$/gm)].map((m) => ({ id: Number(m[1]), type: m[2] }));
    await eventually(() => expect(frames().map((f) => f.type)).toEqual(['job.submitted']));

    // Transaction A records job.funded and stays open; transaction B then records job.placed for
    // the same job and tries to commit first.
    const aRecorded = gate();
    const aCommit = gate();
    const txA = db.transaction(async (tx) => {
      await projection.apply(tx, funded(jobId));
      aRecorded.open();
      await aCommit.wait;
    });
    await aRecorded.wait;
    let bCommitted = false;
    const txB = db
      .transaction((tx) => projection.apply(tx, placed(jobId)))
      .then(() => {
        bCommitted = true;
      });
    // B waits for A's lock on the job (it cannot take a number A has not committed below) …
    await eventually(async () => {
      const { rows } = await h.pg.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE wait_event_type = 'Lock' AND position($1 in query) > 0`,
        [`"${h.pg.schema}".jobs`],
      );
      expect(rows[0]!.n).toBe(1);
    });
    // … while another job's transaction commits and advances the table's global sequence.
    await db.transaction((tx) => projection.apply(tx, funded(other)));
    expect(bCommitted).toBe(false);
    expect(frames().map((f) => f.type)).toEqual(['job.submitted']);

    aCommit.open();
    await Promise.all([txA, txB]);
    await eventually(() =>
      expect(frames()).toEqual([
        { id: 1, type: 'job.submitted' },
        { id: 2, type: 'job.funded' },
        { id: 3, type: 'job.placed' },
      ]),
    );
    // The global sequence is not the stream's order: the other job's event sits between them.
    const { rows } = await h.pg.pool.query<{ job_id: string; type: string }>(
      `SELECT job_id, type FROM job_events WHERE job_id = ANY($1) AND type <> 'job.submitted' ORDER BY seq`,
      [[jobId, other]],
    );
    expect(rows).toEqual([
      { job_id: jobId, type: 'job.funded' },
      { job_id: other, type: 'job.funded' },
      { job_id: jobId, type: 'job.placed' },
    ]);
    abort.abort();
    await pump;
  });

  it('resumes after Last-Event-ID with the per-job number and ignores a redelivered event', async () => {
    const jobId = await submit();
    const {
      eventing: { db },
      projection,
    } = h;
    const event = funded(jobId);
    await db.transaction((tx) => projection.apply(tx, event));
    await db.transaction((tx) => projection.apply(tx, event));
    await db.transaction((tx) => projection.apply(tx, placed(jobId)));
    const history = await projection.history(jobId, 0);
    expect(history.map((e) => [e.seq, e.type])).toEqual([
      [1, 'job.submitted'],
      [2, 'job.funded'],
      [3, 'job.placed'],
    ]);
    expect((await projection.history(jobId, 2)).map((e) => e.type)).toEqual(['job.placed']);
  });

  it('applies a consumer batch of several jobs in order, numbering each job on its own and skipping duplicates and strangers', async () => {
    const first = await submit();
    const second = await submit();
    const {
      eventing: { db },
      projection,
    } = h;
    const recorded = funded(second);
    await db.transaction((tx) => projection.apply(tx, recorded));
    const firstFunded = funded(first);
    await db.transaction((tx) =>
      projection.applyBatch(tx, [
        firstFunded,
        placed(second),
        funded('not-a-job-of-this-gateway'),
        recorded, // redelivered: already in the second job's history
        placed(first),
        firstFunded, // twice in one batch
      ]),
    );
    expect((await projection.history(first, 0)).map((e) => [e.seq, e.type])).toEqual([
      [1, 'job.submitted'],
      [2, 'job.funded'],
      [3, 'job.placed'],
    ]);
    expect((await projection.history(second, 0)).map((e) => [e.seq, e.type])).toEqual([
      [1, 'job.submitted'],
      [2, 'job.funded'],
      [3, 'job.placed'],
    ]);
    for (const jobId of [first, second]) {
      const view = await projection.get('tenant-order', jobId);
      expect(view?.status).toBe('placed');
      const { rows } = await h.pg.pool.query<{ status: string; last_seq: string; updated_at: Date }>(
        `SELECT status, last_seq, updated_at FROM jobs WHERE job_id = $1`,
        [jobId],
      );
      expect(rows[0]).toEqual({
        status: 'placed',
        last_seq: '3',
        updated_at: new Date(view!.updatedAt),
      });
    }
    const { rows } = await h.pg.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM job_events WHERE job_id = 'not-a-job-of-this-gateway'`,
    );
    expect(rows[0]!.n).toBe(0);
  });
});
