import type { EdgePathReport, OverlayEndpoint } from '@gpunet/contracts';
import { glooAllReduceArgv, type Netns, type TestProcess, tsxArgv, tsxEnv } from '@gpunet/netns-testbed';
import {
  type ConnectPeersOptions,
  generateAdmissionKeys,
  issueAdmissionToken,
  OVERLAY_AGENT_MAIN,
  OverlayAgentClient,
  rankNetworkEnv,
  type RelayAddress,
} from '@gpunet/overlay';

/** The control plane's admission keys for a test run. */
export const controlPlaneKeys = generateAdmissionKeys();

export const RELAY_PORT = 8443;
export const STUN_PORTS = [3478, 3479] as const;
export const RELAY_METRICS_PORT = 9464;

/** Starts the relay service (`src/main.ts`) inside `ns`, listening on its public address. */
export const startRelay = async (ns: Netns, label = 'relay'): Promise<TestProcess> => {
  const relay = ns.spawn(label, tsxArgv('services/relay/src/main.ts'), {
    env: tsxEnv({
      RELAY_ID: 'relay-1',
      RELAY_PORT: String(RELAY_PORT),
      RELAY_STUN_PORTS: STUN_PORTS.join(','),
      RELAY_VERIFY_KEYS: controlPlaneKeys.verifyKey,
      METRICS_PORT: String(RELAY_METRICS_PORT),
    }),
  });
  await relay.waitForOutput(/relay started/, { timeoutMs: 30_000 });
  return relay;
};

export const relayAt = (host: string): RelayAddress => ({
  relayId: 'relay-1',
  host,
  port: RELAY_PORT,
  stunPorts: [...STUN_PORTS],
});

export interface OverlayHost {
  /** The host's namespace (the edge's agent runs there). */
  readonly hostNs: Netns;
  /** The rank namespace the overlay interface goes into. */
  readonly rankNs: Netns;
}

export interface AttachedJob {
  readonly jobId: string;
  readonly networkCidr: string;
  readonly addresses: readonly string[];
  readonly agents: readonly OverlayAgentClient[];
  readonly endpoints: readonly OverlayEndpoint[];
  readonly reports: readonly EdgePathReport[];
}

/** Starts an overlay agent inside a host's namespace. */
export const startAgent = async (ns: Netns, label: string): Promise<OverlayAgentClient> => {
  const process = ns.spawn(label, tsxArgv(OVERLAY_AGENT_MAIN), { env: tsxEnv() });
  const client = new OverlayAgentClient({
    write: (t) => process.write(t),
    onStdout: (l) => process.onStdout(l),
  });
  await process.waitForOutput(/overlay agent ready/, { timeoutMs: 30_000 });
  return client;
};

/**
 * Plays the control plane for one job: an agent per host attaches (host i gets `.i+1`), admission
 * tokens are signed for the reported keys, then every agent connects to the others at once.
 */
export const attachJob = async (
  jobId: string,
  networkPrefix: string,
  hosts: readonly OverlayHost[],
  relays: readonly RelayAddress[],
  options: ConnectPeersOptions = {},
): Promise<AttachedJob> => {
  const agents = await Promise.all(hosts.map((h, i) => startAgent(h.hostNs, `agent-${jobId}-${i}`)));
  const addresses = hosts.map((_, i) => `${networkPrefix}.${i + 1}`);
  const networkCidr = `${networkPrefix}.0/24`;
  const attached = await Promise.all(
    agents.map((agent, i) =>
      agent.attach({
        jobId,
        networkCidr,
        address: addresses[i]!,
        relays: [...relays],
        rankNetns: { name: hosts[i]!.rankNs.name },
      }),
    ),
  );
  const endpoints = attached.map((a) => a.endpoint);
  const peers = endpoints.map((e) => ({
    edgeId: null,
    publicKey: e.publicKey,
    address: e.address,
    candidates: e.candidates,
  }));
  const reports = await Promise.all(
    agents.map((agent, i) =>
      agent.connectPeers(peers, {
        ...options,
        admissionToken: issueAdmissionToken(
          { jobId, publicKey: endpoints[i]!.publicKey, exp: Date.now() + 3_600_000 },
          controlPlaneKeys.signingKey,
        ),
      }),
    ),
  );
  return { jobId, networkCidr, addresses, agents, endpoints, reports };
};

export interface GlooRank {
  readonly ns: Netns;
  readonly env: Record<string, string>;
}

/** One `ITERS × all-reduce` job: ranks by namespace, with their framework environment. */
export const startGloo = (
  ranks: readonly GlooRank[],
  settings: { iters?: number; numel?: number; timeoutS?: number; pauseMs?: number; label?: string },
): TestProcess[] =>
  ranks.map((r, rank) =>
    r.ns.spawn(`${settings.label ?? 'gloo'} rank ${rank}`, glooAllReduceArgv(), {
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        ...r.env,
        RANK: String(rank),
        WORLD_SIZE: String(ranks.length),
        ITERS: String(settings.iters ?? 1),
        NUMEL: String(settings.numel ?? 1 << 20),
        TIMEOUT_S: String(settings.timeoutS ?? 60),
        PAUSE_MS: String(settings.pauseMs ?? 0),
        OMP_NUM_THREADS: '1',
      },
    }),
  );

/** The overlay environment of every rank of a job: `ranksPerHost` ranks in each host's rank namespace. */
export const overlayRanks = (
  job: AttachedJob,
  hosts: readonly OverlayHost[],
  ranksPerHost: number,
  masterPort = 29500,
): GlooRank[] =>
  hosts.flatMap((host) =>
    Array.from({ length: ranksPerHost }, () => ({
      ns: host.rankNs,
      env: rankNetworkEnv({ networkCidr: job.networkCidr, masterAddr: job.addresses[0]!, masterPort }),
    })),
  );

export interface GlooEvent {
  readonly event: 'ready' | 'iter' | 'done';
  readonly rank: number;
  readonly i?: number;
  readonly ms?: number;
  readonly ok?: boolean;
}

/** The JSON events a rank printed. */
export const glooEvents = (rank: TestProcess): GlooEvent[] =>
  rank.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as GlooEvent);
