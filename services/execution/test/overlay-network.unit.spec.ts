import { type JobPathReport, type LaunchedRank, originOf } from '@gpunet/contracts';
import { generateAdmissionKeys, type PrepareOverlayRequest, type PreparedOverlay } from '@gpunet/overlay';
import fc from 'fast-check';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configFromEnv, InvalidConfigError, parseOverlayRelays } from '../src/app/execution.config';
import { OverlayRankNetwork } from '../src/infra/overlay-rank-network';

const base = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' };
const A = `U${'A'.repeat(55)}`;
const B = `U${'B'.repeat(55)}`;

const issuesOf = (env: Record<string, string>): string[] => {
  try {
    configFromEnv(env);
  } catch (e) {
    if (e instanceof InvalidConfigError) return e.issues.map((i) => i.path);
    throw e;
  }
  return [];
};

describe('EXECUTION_NETWORK=overlay configuration', () => {
  it('reads relays (JSON or id=host:port/stun+stun) and the admission key file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gpunet-exec-key-'));
    try {
      const keys = generateAdmissionKeys();
      await writeFile(join(dir, 'admission.key'), `${keys.signingKey}\n`);
      const c = configFromEnv({
        ...base,
        EXECUTION_NETWORK: 'overlay',
        EXECUTION_OVERLAY_RELAYS: 'relay-1=203.0.113.5:8443/3478+3479,relay-2=relay.example:443',
        EXECUTION_OVERLAY_ADMISSION_KEY_FILE: join(dir, 'admission.key'),
      });
      expect(c.network).toEqual({
        kind: 'overlay',
        signingKey: keys.signingKey,
        relays: [
          { relayId: 'relay-1', host: '203.0.113.5', port: 8443, stunPorts: [3478, 3479], tls: false },
          { relayId: 'relay-2', host: 'relay.example', port: 443, stunPorts: [3478, 3479], tls: false },
        ],
      });
      expect(parseOverlayRelays('[{"relayId":"r","host":"h","port":1,"stunPorts":[],"tls":true}]')).toEqual({
        ok: true,
        relays: [{ relayId: 'r', host: 'h', port: 1, stunPorts: [], tls: true }],
      });
      expect(configFromEnv({ ...base, EXECUTION_NETWORK: 'overlay' }).network).toEqual({
        kind: 'overlay',
        relays: [],
        signingKey: null,
      });
      await writeFile(join(dir, 'bad.key'), 'not a key');
      expect(
        issuesOf({
          ...base,
          EXECUTION_NETWORK: 'overlay',
          EXECUTION_OVERLAY_ADMISSION_KEY_FILE: join(dir, 'bad.key'),
        }),
      ).toEqual(['EXECUTION_OVERLAY_ADMISSION_KEY_FILE']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.each([
    [{ EXECUTION_NETWORK: 'mesh' }, 'EXECUTION_NETWORK'],
    [{ EXECUTION_NETWORK: 'overlay', EXECUTION_OVERLAY_RELAYS: 'r=h:99999' }, 'EXECUTION_OVERLAY_RELAYS'],
    [
      { EXECUTION_NETWORK: 'overlay', EXECUTION_OVERLAY_RELAYS: '[{"relayId":"r"}]' },
      'EXECUTION_OVERLAY_RELAYS',
    ],
    [{ EXECUTION_NETWORK: 'overlay', EXECUTION_OVERLAY_RELAYS: 'r=h:1,r=h:2' }, 'EXECUTION_OVERLAY_RELAYS'],
    [
      { EXECUTION_NETWORK: 'overlay', EXECUTION_OVERLAY_RELAYS: 'r=h:1' },
      'EXECUTION_OVERLAY_ADMISSION_KEY_FILE',
    ],
    [
      { EXECUTION_NETWORK: 'overlay', EXECUTION_OVERLAY_ADMISSION_KEY_FILE: '/nonexistent/key' },
      'EXECUTION_OVERLAY_ADMISSION_KEY_FILE',
    ],
  ])('refuses %j naming %s', (env, path) => {
    expect(issuesOf({ ...base, ...env })).toContain(path);
  });

  it('never throws anything but a named config error on arbitrary relay text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        const r = parseOverlayRelays(text);
        if (!r.ok) expect(r.message.length).toBeGreaterThan(0);
        const paths = issuesOf({ ...base, EXECUTION_NETWORK: 'overlay', EXECUTION_OVERLAY_RELAYS: text });
        for (const p of paths)
          expect(['EXECUTION_OVERLAY_RELAYS', 'EXECUTION_OVERLAY_ADMISSION_KEY_FILE']).toContain(p);
      }),
    );
  });
});

const report = (jobId: string): JobPathReport => ({
  jobId,
  generatedAt: '2026-01-01T00:00:00.000Z',
  pairs: [],
  direct: 0,
  relayed: 1,
  other: 0,
});

/** A coordinator that allocates `100.96.<n>.0/24` per prepare and remembers what it was asked. */
const fakeCoordinator = () => {
  const requests: PrepareOverlayRequest[] = [];
  const teardowns: [string, readonly string[]][] = [];
  let n = 0;
  return {
    requests,
    teardowns,
    prepare: (request: PrepareOverlayRequest): Promise<PreparedOverlay> => {
      requests.push(request);
      n += 1;
      const addresses = Object.fromEntries(request.hosts.map((h, i) => [h.edgeId, `100.96.${n}.${i + 1}`]));
      return Promise.resolve({
        jobId: request.jobId,
        networkCidr: `100.96.${n}.0/24`,
        interface: 'gpunet0',
        masterAddr: addresses[request.hosts[0]!.edgeId]!,
        addresses,
        addressOf: (edgeId: string) => {
          const a = addresses[edgeId];
          if (!a) throw new Error(`edge ${edgeId} is not in the job`);
          return a;
        },
        hosts: request.hosts.map((h) => ({ ...h, address: addresses[h.edgeId]! })),
        endpoints: {},
        edgeReports: {},
        report: report(request.jobId),
      });
    },
    teardown: (jobId: string, edgeIds: readonly string[]) => {
      teardowns.push([jobId, edgeIds]);
      return Promise.resolve({ detached: [...edgeIds], failed: [] });
    },
  };
};

describe('OverlayRankNetwork', () => {
  const cause = originOf('launch-1');
  const relays = [{ relayId: 'relay-1', host: '203.0.113.5', port: 8443, stunPorts: [3478], tls: false }];
  const nodes = [
    { providerId: A, hostId: 'host-a' },
    { providerId: A, hostId: 'host-a' },
    { providerId: B, hostId: 'host-b' },
  ];

  it('prepares once per job: one host per edge in rank order, overlay addresses, gpunet0, report published', async () => {
    const coordinator = fakeCoordinator();
    const published: JobPathReport[] = [];
    const network = new OverlayRankNetwork({
      coordinator,
      relays,
      signingKey: 'k',
      publishReport: (r, c) => {
        expect(c).toEqual(cause);
        published.push(r);
        return Promise.resolve();
      },
    });
    const [p1, p2] = await Promise.all([
      network.prepare({ jobId: 'job-1', tenantId: 't', cause }, nodes),
      network.prepare({ jobId: 'job-1', tenantId: 't', cause }, nodes),
    ]);
    expect(p1).toBe(p2);
    expect(coordinator.requests).toHaveLength(1);
    expect(coordinator.requests[0]).toMatchObject({
      jobId: 'job-1',
      hosts: [
        { edgeId: A, hostId: 'host-a' },
        { edgeId: B, hostId: 'host-b' },
      ],
      relays,
      admission: { signingKey: 'k' },
      networksInUse: [],
    });
    expect(p1.addressOf(nodes[0]!)).toBe('100.96.1.1');
    expect(p1.addressOf(nodes[2]!)).toBe('100.96.1.2');
    expect(p1.interface).toBe('gpunet0');
    expect(p1.bindInterfaceOf(nodes[2]!)).toBe('gpunet0');
    expect(p1.netnsRequired).toBe(true);
    expect(p1.overlayAddressOf({ providerId: B } as LaunchedRank)).toBe('100.96.1.2');
    expect(published).toEqual([report('job-1')]);

    // A second job avoids the first one's network; teardown detaches the job's edges once.
    await network.prepare({ jobId: 'job-2', tenantId: 't', cause }, nodes.slice(2));
    expect(coordinator.requests[1]!.networksInUse).toEqual(['100.96.1.0/24']);
    await network.teardown('job-1', nodes);
    expect(coordinator.teardowns).toEqual([['job-1', [A, B]]]);
    expect(network.networksInUse).toEqual(['100.96.2.0/24']);
  });

  it('forgets a failed prepare (the next attempt prepares again) and refuses relays without a key', async () => {
    const coordinator = fakeCoordinator();
    let fail = true;
    const network = new OverlayRankNetwork({
      coordinator: {
        prepare: (r) => (fail ? Promise.reject(new Error('edge unreachable')) : coordinator.prepare(r)),
        teardown: coordinator.teardown,
      },
      relays: [],
      signingKey: null,
      publishReport: () => Promise.resolve(),
    });
    await expect(network.prepare({ jobId: 'job-1', tenantId: 't', cause }, nodes)).rejects.toThrow(
      /unreachable/,
    );
    fail = false;
    const p = await network.prepare({ jobId: 'job-1', tenantId: 't', cause }, nodes);
    expect(p.addressOf(nodes[0]!)).toBe('100.96.1.1');
    expect(
      () =>
        new OverlayRankNetwork({
          coordinator,
          relays,
          signingKey: null,
          publishReport: () => Promise.resolve(),
        }),
    ).toThrow(/signing key/);
  });

  it('tears down a job it forgot (a restart) from the placement; retries failed detaches, then gives up and reports', async () => {
    const coordinator = fakeCoordinator();
    const errors: string[] = [];
    let failing = true;
    const network = new OverlayRankNetwork({
      coordinator: {
        prepare: coordinator.prepare,
        teardown: (jobId, edgeIds) =>
          failing
            ? Promise.resolve({
                detached: [],
                failed: edgeIds.map((edgeId) => ({ edgeId, reason: 'no reply' })),
              })
            : coordinator.teardown(jobId, edgeIds),
      },
      relays: [],
      signingKey: null,
      publishReport: () => Promise.resolve(),
      onError: (e, context) => errors.push(`${context}: ${String(e)}`),
      teardownAttempts: 2,
    });
    // Not prepared here: best effort from the placement, no retries.
    await network.teardown('job-old', nodes);
    expect(errors).toEqual([expect.stringMatching(/job-old.*given up.*no reply/)]);
    failing = false;
    await network.teardown('job-old', nodes);
    expect(coordinator.teardowns).toEqual([['job-old', [A, B]]]);
    await network.teardown('job-none', []);
    expect(coordinator.teardowns).toHaveLength(1);

    // Prepared here: the first failure rejects (the release retries), the last one is given up.
    failing = true;
    await network.prepare({ jobId: 'job-1', tenantId: 't', cause }, nodes);
    await expect(network.teardown('job-1', nodes)).rejects.toThrow(/detach failed on .*no reply/);
    expect(network.networksInUse).toHaveLength(1);
    await network.teardown('job-1', nodes);
    expect(network.networksInUse).toEqual([]);
    expect(errors).toHaveLength(2);
  });
});
