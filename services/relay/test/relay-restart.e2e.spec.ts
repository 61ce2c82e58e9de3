import {
  buildInternet,
  type Internet,
  requireTestbed,
  type TestProcess,
  Testbed,
} from '@gpunet/netns-testbed';
import { waitFor } from '@gpunet/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AttachedJob,
  attachJob,
  glooEvents,
  type OverlayHost,
  overlayRanks,
  relayAt,
  startGloo,
  startRelay,
} from './support/overlay-job';

const ok = await requireTestbed('relay restart', ['wireguard-go', '/usr/bin/python3']);

/** The job's timeout: the collective must complete within it despite the relay's restart. */
const JOB_TIMEOUT_S = 60;

describe.skipIf(!ok)('the relay restarted in the middle of a relayed job', () => {
  let tb: Testbed;
  let net: Internet;
  let hosts: OverlayHost[];
  let job: AttachedJob;
  let relay: TestProcess;

  beforeAll(async () => {
    tb = await Testbed.create('restart');
    net = await buildInternet(tb, {
      sites: [
        { name: 'a', nat: 'symmetric', hosts: ['ha'] },
        { name: 'b', nat: 'symmetric', hosts: ['hb'] },
      ],
      public: ['relay'],
    });
    relay = await startRelay(net.host('relay').ns, 'relay (first)');
    hosts = [
      { hostNs: net.host('ha').ns, rankNs: await tb.namespace('ra') },
      { hostNs: net.host('hb').ns, rankNs: await tb.namespace('rb') },
    ];
    job = await attachJob('job-restart', '100.96.41', hosts, [relayAt(net.host('relay').address)], {
      windowMs: 1_500,
      measureThroughput: false,
    });
  });

  afterAll(async () => {
    await Promise.all((job?.agents ?? []).map((a) => a.detach().catch(() => undefined)));
    await tb?.destroy();
  });

  it('edges reconnect and the collective completes within the job timeout', async () => {
    expect(job.reports.map((r) => r.peers[0]!.path)).toEqual(['relayed', 'relayed']);
    const ranks = startGloo(overlayRanks(job, hosts, 1), {
      label: 'restart',
      iters: 20,
      numel: 1 << 16,
      pauseMs: 200,
      timeoutS: JOB_TIMEOUT_S,
    });
    const started = performance.now();
    // Mid-job: a few all-reduces went through the first relay.
    await ranks[0]!.waitForOutput(/"event": "iter", "rank": 0, "i": 2,/, { timeoutMs: 60_000 });
    relay.kill('SIGKILL');
    await relay.waitForExit();
    await waitFor(
      async () => (await Promise.all(job.agents.map((a) => a.status()))).every((s) => !s.relayConnected),
      {
        timeoutMs: 20_000,
        description: 'edges to notice the relay is gone',
      },
    );
    relay = await startRelay(net.host('relay').ns, 'relay (restarted)');
    await waitFor(
      async () => (await Promise.all(job.agents.map((a) => a.status()))).every((s) => s.relayConnected),
      {
        timeoutMs: 20_000,
        description: 'edges to reconnect to the restarted relay',
      },
    );

    const exits = await Promise.all(ranks.map((r) => r.waitForExit(JOB_TIMEOUT_S * 1000)));
    expect(
      exits.map((e) => e.code),
      ranks.map((r) => r.output).join('\n'),
    ).toEqual([0, 0]);
    expect(performance.now() - started).toBeLessThan(JOB_TIMEOUT_S * 1000);
    for (const rank of ranks) {
      const events = glooEvents(rank);
      expect(events.filter((e) => e.event === 'iter' && e.ok)).toHaveLength(20);
      expect(events.at(-1)?.event).toBe('done');
    }
    const statuses = await Promise.all(job.agents.map((a) => a.status()));
    expect(statuses.map((s) => s.relayStats!.connects)).toEqual([2, 2]);
  });
});
