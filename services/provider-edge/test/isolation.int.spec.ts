import {
  buildEnvelope,
  EdgeInventoryReported,
  EdgeRegistered,
  EdgeStream,
  type EdgeIsolation,
  executionStreams,
  type IsolationLevel,
  namespacedStream,
  type PayloadOf,
  providerStreams,
  ReservationReplySchema,
  ReserveOnEdge,
  verifyEdgeReport,
} from '@gpunet/contracts';
import { ensureStreams } from '@gpunet/eventing';
import { type NatsTestContext, useNats, waitFor } from '@gpunet/testing';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EdgeAgent } from '../src/app/edge-agent';
import { type EdgeCliIo, runEdgeCli } from '../src/app/edge-cli';
import { detect } from '../src/infra/detect/detector';
import { createIdentity } from '../src/infra/identity.store';
import { StateStore } from '../src/infra/state.store';
import { FIXTURES } from './support/fixtures';

/*
 * An edge started with `--runtime process --unsafe-allow-host-processes` (the command line, real
 * NATS) says so, reports host-process in its signed host, and declines the reservations of a subnet
 * that requires a container; the agent re-checks its isolation at every rescan and reports a change.
 */
const H100 = join(FIXTURES, 'simulated', 'h100-node.inventory.yaml');
const POLICY = `version: 1
name: isolation-test
gpus: { share: all, max_per_job: 2 }
cpu: { reserve_cores: 0 }
memory: { reserve: 0GiB }
images: { allow: ['gpunet/'] }
pricing: { asset: USDC, default_per_gpu_hour: '0.40' }
subnets: [public]
jobs: { max_duration: 1h }
`;
const MiB = 1024 ** 2;

type Host = PayloadOf<typeof EdgeRegistered>['host'];

describe('isolation of an edge on real NATS', () => {
  let nats: NatsTestContext;
  const dirs: string[] = [];

  beforeAll(async () => {
    nats = await useNats({ label: 'edge_isolation' });
    await ensureStreams(await nats.jsm(), [...providerStreams, ...executionStreams], nats.prefix);
  }, 30_000);
  afterAll(async () => {
    await nats?.cleanup();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  const edgeDir = async (): Promise<string> => {
    const dir = await mkdtemp(join(tmpdir(), 'gpunet-edge-isolation-'));
    dirs.push(dir);
    await writeFile(join(dir, 'policy.yaml'), POLICY);
    return dir;
  };

  /** The last signed report of `def` in the edge stream, its signature checked. */
  const lastReport = async (
    def: typeof EdgeRegistered | typeof EdgeInventoryReported,
    edgeId: string,
  ): Promise<{ host: Host }> => {
    const jsm = await nats.jsm();
    const stored = await jsm.streams.getMessage(namespacedStream(EdgeStream, nats.prefix).name, {
      last_by_subj: def.subject({ edgeId }, nats.prefix),
    });
    const data = stored!.json<{ data: PayloadOf<typeof def> }>().data;
    expect(verifyEdgeReport(def, edgeId, data)).toBeNull();
    return data;
  };

  /** Each reservation asks for its own GPU of the eight, so that none is busy with an earlier one. */
  let gpu = 0;
  const reserve = async (edgeId: string, reservationId: string, minimumIsolation: IsolationLevel) =>
    ReservationReplySchema.parse(
      (
        await nats.nc.request(
          ReserveOnEdge.subject({ edgeId }, nats.prefix),
          JSON.stringify(
            buildEnvelope(
              ReserveOnEdge,
              {
                reservationId,
                jobId: `job-${reservationId}`,
                gpuUuids: [`SIM-nvidia-${gpu++ % 8}`],
                cpuMillicores: 1_000,
                memoryBytes: 512 * MiB,
                image: null,
                maxDurationMs: 600_000,
                subnet: 'public',
                asset: 'USDC',
                pricePerGpuHourMinor: '3000000',
                holdUntil: new Date(Date.now() + 600_000).toISOString(),
                minimumIsolation,
              },
              { streamId: `job-${reservationId}` },
            ),
          ),
          { timeout: 15_000 },
        )
      ).json(),
    );

  describe('provider-edge start --runtime process --unsafe-allow-host-processes', () => {
    let dir: string;
    let edgeId: string;
    let stop: () => void = () => undefined;
    let reload: () => void = () => undefined;
    let exited: Promise<number>;
    const out: string[] = [];
    const logs = () => out.join('').split('\n').filter(Boolean);

    beforeAll(async () => {
      dir = await edgeDir();
      edgeId = (await createIdentity(dir)).edgeId;
      const stopped = new Promise<void>((resolve) => (stop = resolve));
      const io: EdgeCliIo = {
        out: (t) => out.push(t),
        err: (t) => out.push(t),
        env: {},
        untilStopped: () => stopped,
        onReload: (fn) => (reload = fn),
      };
      exited = runEdgeCli(
        [
          'start',
          '--dir',
          dir,
          '--simulate',
          H100,
          '--runtime',
          'process',
          '--unsafe-allow-host-processes',
          '--nats',
          String(nats.servers),
          '--prefix',
          nats.prefix,
          '--heartbeat',
          '1s',
          '--rescan',
          '0s',
          '--overlay',
          'off',
        ],
        io,
      );
      await waitFor(() => logs().some((l) => l.includes('"msg":"edge started"')), {
        timeoutMs: 45_000,
        description: `the edge to start: ${out.join('')}`,
      });
    }, 60_000);
    afterAll(async () => {
      stop();
      expect(await exited).toBe(0);
    });

    it('warns at start, as a JSON log line at warn, that jobs run unsandboxed', () => {
      const warning = logs()
        .map((l) => JSON.parse(l) as { level: string; msg: string; isolation?: string })
        .find((l) => l.msg.startsWith('UNSAFE: --unsafe-allow-host-processes'));
      expect(warning).toMatchObject({ level: 'warn', isolation: 'host-process' });
      expect(warning?.msg).toContain('no sandbox');
    });

    it('reports host-process in the signed host of its registration (its first inventory report)', async () => {
      await waitFor(
        async () =>
          (await nats.jsm()).streams
            .getMessage(namespacedStream(EdgeStream, nats.prefix).name, {
              last_by_subj: EdgeRegistered.subject({ edgeId }, nats.prefix),
            })
            .then(
              () => true,
              () => false,
            ),
        { description: 'the registration in the stream' },
      );
      const { host } = await lastReport(EdgeRegistered, edgeId);
      expect(host.isolation).toMatchObject({
        level: 'host-process',
        runtime: 'process',
        ociRuntime: null,
        userNamespaces: false,
      });
      expect(host.isolation?.detail).toContain('--unsafe-allow-host-processes');
    });

    it('declines a job whose subnet requires container isolation, naming both levels', async () => {
      const reply = await reserve(edgeId, 'needs-container', 'container');
      expect(reply).toMatchObject({
        outcome: 'declined',
        reasons: [{ code: 'ISOLATION_TOO_WEAK', field: 'minimumIsolation' }],
      });
      expect(reply.reasons[0]!.message).toMatch(
        /requires isolation container or stronger; this edge runs ranks as host-process/,
      );
    });

    it('accepts a job whose subnet accepts host processes', async () => {
      expect(await reserve(edgeId, 'accepts-host', 'host-process')).toMatchObject({ outcome: 'accepted' });
    });

    it('keeps its isolation across a policy reload that changes nothing about it; status shows it', async () => {
      await writeFile(join(dir, 'policy.yaml'), POLICY.replace("'0.40'", "'0.30'"));
      reload();
      await waitFor(() => logs().some((l) => l.includes('"msg":"policy reloaded and reported"')), {
        description: 'the reload',
      });
      const reply = await reserve(edgeId, 'after-reload', 'container');
      expect(reply.reasons.map((r) => r.code)).toEqual(['ISOLATION_TOO_WEAK']);
      expect(await reserve(edgeId, 'after-reload-host', 'host-process')).toMatchObject({
        outcome: 'accepted',
      });

      const json: string[] = [];
      const text: string[] = [];
      const statusIo = (sink: string[]): EdgeCliIo => ({
        out: (t) => sink.push(t),
        err: (t) => sink.push(t),
        env: {},
        untilStopped: () => Promise.resolve(),
        onReload: () => undefined,
      });
      expect(await runEdgeCli(['status', '--dir', dir, '--simulate', H100, '--json'], statusIo(json))).toBe(
        0,
      );
      expect((JSON.parse(json.join('')) as { isolation: unknown }).isolation).toMatchObject({
        reported: true,
        level: 'host-process',
        runtime: 'process',
      });
      expect(await runEdgeCli(['status', '--dir', dir, '--simulate', H100], statusIo(text))).toBe(0);
      expect(text.join('')).toMatch(/^isolation: host-process — ranks run as plain processes of this host/m);
    });
  });

  describe('the agent re-checks its isolation at every rescan', () => {
    it('reports a change in a signed inventory report, and nothing when it stays', async () => {
      const dir = await edgeDir();
      const level = (l: IsolationLevel): EdgeIsolation => ({
        level: l,
        runtime: 'docker',
        ociRuntime: 'runc',
        userNamespaces: l === 'container-userns',
        detail: `the engine says ${l}`,
      });
      let now = level('container');
      let failing = false;
      const agent = new EdgeAgent({
        identity: await createIdentity(dir),
        store: StateStore.in(dir),
        readPolicy: () => readFile(join(dir, 'policy.yaml'), 'utf8'),
        detect: () => detect({ workDir: dir, simulate: H100 }),
        nats: { servers: nats.servers, prefix: nats.prefix },
        heartbeatIntervalMs: 0,
        rescanIntervalMs: 0,
        publishTimeoutMs: 2_000,
        random: () => 0.5,
        ranks: { enabled: false },
        isolation: () => (failing ? Promise.reject(new Error('engine restarting')) : Promise.resolve(now)),
      });
      await agent.start();
      try {
        expect(agent.host.isolation).toEqual(now);
        expect((await reserve(agent.edgeId, 'r-container', 'container')).outcome).toBe('accepted');
        expect((await reserve(agent.edgeId, 'r-userns', 'container-userns')).outcome).toBe('declined');

        expect(await agent.rescan()).toBe(false);
        now = level('container-userns'); // the provider turned userns-remap on
        expect(await agent.rescan()).toBe(true);
        await agent.flushed();
        const { host } = await lastReport(EdgeInventoryReported, agent.edgeId);
        expect(host.isolation).toEqual(level('container-userns'));
        expect((await reserve(agent.edgeId, 'r-userns-2', 'container-userns')).outcome).toBe('accepted');
        expect(await agent.rescan()).toBe(false);

        // A check that fails keeps the last one.
        failing = true;
        expect(await agent.rescan()).toBe(false);
        expect(agent.host.isolation).toEqual(level('container-userns'));
      } finally {
        await agent.stop({ flushTimeoutMs: 500 });
      }
    }, 60_000);
  });
});
