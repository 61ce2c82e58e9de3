import { parseDurationMs } from '@gpunet/ensemble-spec';
import { findExecutable } from '@gpunet/overlay';
import { access, mkdir, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { POLICY_TEMPLATE, parsePolicy } from '../domain/policy/policy';
import { activeReservations } from '../domain/policy/reservation.check';
import { reservationsInUseUntil } from '../domain/ranks/in-use';
import { resolveSharedGpus } from '../domain/policy/shared-gpus';
import {
  type Detection,
  detect,
  InvalidInventoryFileError,
  readTextOrUndefined,
} from '../infra/detect/detector';
import { IdentityError, loadIdentity, loadOrCreateIdentity } from '../infra/identity.store';
import { jsonLogger } from '../infra/logger';
import { createDockerRuntime, dockerIsolationFor } from '../infra/runtime/docker-wiring';
import { noRanksIsolation, processIsolation } from '../infra/runtime/isolation';
import { ProcessRuntime } from '../infra/runtime/process.runtime';
import { StateFileError, StateStore } from '../infra/state.store';
import { EdgeAgent, PolicyRejectedError, ProbeResponderError } from './edge-agent';

/** What the edge's command line may do to the world; tests pass fakes. */
export interface EdgeCliIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Resolves when the process is asked to stop (SIGTERM/SIGINT); `start` runs until then. */
  readonly untilStopped: () => Promise<void>;
  /** Calls `fn` on SIGHUP (reload the policy). */
  readonly onReload: (fn: () => void) => void;
  /** Overrides hardware detection (tests). */
  readonly detect?: typeof detect;
}

export const ExitCode = { Ok: 0, Failed: 1, Usage: 2 } as const;

const HELP = `provider-edge — the gpunet agent of one GPU host

Usage:
  provider-edge init   [--dir DIR]
  provider-edge start  [--dir DIR] [--policy FILE] [--nats URL] [--simulate INVENTORY] [--heartbeat 5s] [--rescan 60s]
                       [--runtime docker|process|none] [--unsafe-allow-host-processes]
                       [--rank-grace 10s] [--log-batch 100ms]
                       [--job-files DIR] [--overlay auto|on|off] [--overlay-netns-prefix gpunet]
                       [--probe-ports UDP/TCP|off] [--challenge-threads N]
  provider-edge status [--dir DIR] [--policy FILE] [--simulate INVENTORY] [--json]

  --dir        the edge's directory: identity (edge.nk, 0600), state.json, policy.yaml
               (default $GPUNET_EDGE_HOME or ~/.gpunet/edge)
  --policy     the policy file (default DIR/policy.yaml)
  --nats       NATS server URL (default $NATS_URL or nats://127.0.0.1:4222)
  --simulate   a declared inventory file: simulated GPUs, labelled simulated in every report
  --heartbeat  heartbeat period (default 5s); --rescan hardware rescan period (default 60s)
  --runtime    how ranks run: docker (sandboxed containers — the default), process (plain
               processes of this host: no sandbox, development and CI only; needs
               --unsafe-allow-host-processes), or none (the edge refuses rank starts).
               Workspaces live under DIR/workspaces. The edge reports the isolation it runs
               with (host-process, container, container-userns, gvisor); status shows it.
  --unsafe-allow-host-processes
               allow --runtime process: strangers' code then runs with the edge user's rights,
               and only jobs of subnets that accept host-process isolation are offered
  --rank-grace SIGTERM→SIGKILL grace when the edge stops ranks itself (default 10s)
  --log-batch  longest a rank's output line waits before it is shipped (default 100ms)
  --job-files  development/CI providers: a directory of job code linked into every process rank's
               workspace (the process runtime has no image to bring it)
  --overlay    job overlays (a private WireGuard network per job, ranks in its namespace):
               auto (the default) mounts the overlay agent when the edge runs as root with
               wireguard-go on PATH and says why not otherwise; on insists; off never
  --overlay-netns-prefix
               start of the rank namespaces' names (default gpunet; several edges on one machine
               need distinct ones)
  --probe-ports
               answer peers' link probes on these ports (UDP echo / TCP transfer, every address;
               benchmarking's default is 7946/7947), or off (the default: no listening port; peers'
               probes to this host fail and its links are known only from jobs' overlays)
  --challenge-threads
               CPU threads of the challenge worker's torch (default torch's; it matters only where
               torch sees no GPU and a challenge is computed on the CPU)
  --prefix     subject namespace (tests only)

SIGHUP reloads the policy file; SIGTERM/SIGINT stop the edge.
`;

class Usage extends Error {}

const options = {
  dir: { type: 'string' },
  policy: { type: 'string' },
  nats: { type: 'string' },
  simulate: { type: 'string' },
  heartbeat: { type: 'string' },
  rescan: { type: 'string' },
  runtime: { type: 'string' },
  'rank-grace': { type: 'string' },
  'log-batch': { type: 'string' },
  'job-files': { type: 'string' },
  overlay: { type: 'string' },
  'overlay-netns-prefix': { type: 'string' },
  'probe-ports': { type: 'string' },
  'challenge-threads': { type: 'string' },
  'unsafe-allow-host-processes': { type: 'boolean', default: false },
  prefix: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

const duration = (text: string | undefined, fallback: number, name: string): number => {
  if (text === undefined) return fallback;
  const d = parseDurationMs(text);
  if (!d.ok) throw new Usage(`--${name}: ${d.reason}`);
  return d.value;
};

const exists = async (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

/** Runs `provider-edge <command>` and returns the exit code. */
export const runEdgeCli = async (argv: readonly string[], io: EdgeCliIo): Promise<number> => {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    (command === undefined ? io.err : io.out)(HELP);
    return command === undefined ? ExitCode.Usage : ExitCode.Ok;
  }
  try {
    const { values, positionals } = (() => {
      try {
        return parseArgs({ args: [...rest], options, allowPositionals: true, strict: true });
      } catch (e) {
        throw new Usage(e instanceof Error ? e.message : String(e));
      }
    })();
    if (values.help) {
      io.out(HELP);
      return ExitCode.Ok;
    }
    if (positionals.length > 0) throw new Usage(`unexpected argument ${positionals[0]}`);
    const dir = resolve(values.dir ?? io.env['GPUNET_EDGE_HOME'] ?? join(homedir(), '.gpunet', 'edge'));
    const policyPath = resolve(values.policy ?? join(dir, 'policy.yaml'));
    switch (command) {
      case 'init':
        return await init(dir, policyPath, io);
      case 'start':
        return await start(dir, policyPath, values, io);
      case 'status':
        return await status(dir, policyPath, values, io);
      default:
        throw new Usage(`unknown command ${command}`);
    }
  } catch (e) {
    if (e instanceof Usage) {
      io.err(`provider-edge: ${e.message}\n\n${HELP}`);
      return ExitCode.Usage;
    }
    if (
      e instanceof PolicyRejectedError ||
      e instanceof IdentityError ||
      e instanceof InvalidInventoryFileError ||
      e instanceof StateFileError ||
      e instanceof ProbeResponderError
    ) {
      io.err(`provider-edge ${command}: ${e.message}\n`);
      return ExitCode.Failed;
    }
    throw e;
  }
};

const init = async (dir: string, policyPath: string, io: EdgeCliIo): Promise<number> => {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const { identity, created } = await loadOrCreateIdentity(dir);
  const wrotePolicy = !(await exists(policyPath));
  if (wrotePolicy) await writeFile(policyPath, POLICY_TEMPLATE, { mode: 0o644, flag: 'wx' });
  io.out(
    [
      `edge id (public nkey): ${identity.edgeId}`,
      `identity: ${join(dir, 'edge.nk')} (${created ? 'created' : 'kept'}, mode 0600)`,
      `policy:   ${policyPath} (${wrotePolicy ? 'template written: edit it' : 'kept'})`,
      '',
      'Give the edge id to the network operator: it becomes your NATS user, allowed to publish only on',
      `edge.${identity.edgeId}.> and to receive only cmd.edge.${identity.edgeId}.>.`,
      '',
    ].join('\n'),
  );
  return ExitCode.Ok;
};

const detectWith = (io: EdgeCliIo, dir: string, simulate: string | undefined): Promise<Detection> =>
  (io.detect ?? detect)({ workDir: dir, ...(simulate !== undefined ? { simulate: resolve(simulate) } : {}) });

const start = async (
  dir: string,
  policyPath: string,
  values: {
    nats?: string;
    simulate?: string;
    heartbeat?: string;
    rescan?: string;
    prefix?: string;
    runtime?: string;
    'rank-grace'?: string;
    'log-batch'?: string;
    'job-files'?: string;
    overlay?: string;
    'overlay-netns-prefix'?: string;
    'probe-ports'?: string;
    'challenge-threads'?: string;
    'unsafe-allow-host-processes'?: boolean;
  },
  io: EdgeCliIo,
): Promise<number> => {
  const heartbeatIntervalMs = duration(values.heartbeat, 5_000, 'heartbeat');
  const rescanIntervalMs = duration(values.rescan, 60_000, 'rescan');
  const stopGraceMs = duration(values['rank-grace'], 10_000, 'rank-grace');
  if (stopGraceMs > 300_000) throw new Usage('--rank-grace: at most 5m');
  const logDelayMs = duration(values['log-batch'], 100, 'log-batch');
  if (logDelayMs < 1 || logDelayMs > 10_000) throw new Usage('--log-batch: between 1ms and 10s');
  const jobFiles = values['job-files'] === undefined ? undefined : resolve(values['job-files']);
  if (
    jobFiles !== undefined &&
    !(await stat(jobFiles).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  )
    throw new Usage(`--job-files: ${jobFiles.slice(0, 256)} is not a directory`);
  const runtime = values.runtime ?? 'docker';
  if (runtime !== 'process' && runtime !== 'docker' && runtime !== 'none')
    throw new Usage(`--runtime: docker, process or none, not ${runtime.slice(0, 32)}`);
  if (runtime === 'process' && values['unsafe-allow-host-processes'] !== true)
    throw new Usage(
      '--runtime process runs jobs as plain processes of this host, with no sandbox: add --unsafe-allow-host-processes to allow it (development and CI only)',
    );
  if (runtime !== 'process' && values['unsafe-allow-host-processes'] === true)
    throw new Usage(
      `--unsafe-allow-host-processes: allows only --runtime process; with --runtime ${runtime} it would change nothing`,
    );
  const overlayMode = values.overlay ?? 'auto';
  if (overlayMode !== 'auto' && overlayMode !== 'on' && overlayMode !== 'off')
    throw new Usage(`--overlay: auto, on or off, not ${overlayMode.slice(0, 32)}`);
  const netnsPrefix = values['overlay-netns-prefix'];
  if (netnsPrefix !== undefined && !/^[A-Za-z0-9_.-]{1,40}$/.test(netnsPrefix))
    throw new Usage('--overlay-netns-prefix: 1-40 characters of A-Z a-z 0-9 _ . -');
  const probePorts = parseProbePorts(values['probe-ports'] ?? 'off');
  const threadsText = values['challenge-threads'];
  const challengeThreads = threadsText === undefined ? undefined : Number(threadsText);
  if (
    challengeThreads !== undefined &&
    !(Number.isInteger(challengeThreads) && challengeThreads >= 1 && challengeThreads <= 1024)
  )
    throw new Usage(`--challenge-threads: an integer from 1 to 1024, not ${threadsText!.slice(0, 32)}`);
  const identity = await loadIdentity(dir);
  const log = jsonLogger(io.out, { edgeId: identity.edgeId });
  if (runtime === 'process')
    log(
      'warn',
      'UNSAFE: --unsafe-allow-host-processes: jobs run as plain processes of this host with the edge user’s rights, no sandbox; the edge reports isolation host-process, and only subnets that accept it send jobs (development and CI only)',
      { runtime, isolation: 'host-process' },
    );
  const overlay = await decideOverlay(overlayMode, io);
  if (overlay.enabled) log('info', 'job overlays enabled', { reason: overlay.reason });
  else
    log('warn', 'job overlays disabled: jobs on an overlay network are refused', { reason: overlay.reason });
  const agent = new EdgeAgent({
    identity,
    store: StateStore.in(dir),
    readPolicy: async () => {
      const text = await readTextOrUndefined(policyPath);
      if (text === undefined)
        throw new PolicyRejectedError([{ path: '', message: `cannot read ${policyPath}` }]);
      return text;
    },
    detect: () => detectWith(io, dir, values.simulate),
    nats: {
      servers: values.nats ?? io.env['NATS_URL'] ?? 'nats://127.0.0.1:4222',
      ...(values.prefix ? { prefix: values.prefix } : {}),
    },
    heartbeatIntervalMs,
    rescanIntervalMs,
    log,
    ranks:
      runtime === 'none'
        ? { enabled: false }
        : {
            runtimes:
              runtime === 'process'
                ? [new ProcessRuntime({ stateDir: join(dir, 'ranks'), log })]
                : async (context) => [await createDockerRuntime(context)],
            dataDir: dir,
            stopGraceMs,
            logBatching: { maxDelayMs: logDelayMs },
            ...(jobFiles === undefined ? {} : { jobFiles }),
          },
    isolation:
      runtime === 'docker'
        ? (policy) => dockerIsolationFor(policy)
        : () => Promise.resolve(runtime === 'process' ? processIsolation() : noRanksIsolation()),
    ...(probePorts === null ? {} : { benchmarks: { probeResponder: probePorts } }),
    ...(challengeThreads === undefined ? {} : { challenges: { threads: challengeThreads } }),
    overlay: {
      enabled: overlay.enabled,
      ...(netnsPrefix === undefined ? {} : { netnsPrefix }),
    },
  });
  await agent.start();
  io.onReload(() => {
    void agent
      .reloadPolicy()
      .then((r) =>
        r.ok
          ? log('info', r.changed ? 'policy reloaded and reported' : 'policy reloaded; nothing changed')
          : log('error', 'policy reload refused', { issues: r.issues }),
      );
  });
  await io.untilStopped();
  log('info', 'stopping');
  await agent.stop();
  return ExitCode.Ok;
};

/** `--probe-ports`: `UDP/TCP` (1-65535 each), or `off` (null). */
const parseProbePorts = (text: string): { udpPort: number; tcpPort: number } | null => {
  if (text === 'off') return null;
  const m = /^(\d{1,5})\/(\d{1,5})$/.exec(text);
  const [udpPort, tcpPort] = [Number(m?.[1]), Number(m?.[2])];
  if (!m || udpPort < 1 || udpPort > 65535 || tcpPort < 1 || tcpPort > 65535)
    throw new Usage(
      `--probe-ports: UDP/TCP ports (1-65535, e.g. 7946/7947) or off, not ${text.slice(0, 32)}`,
    );
  return { udpPort, tcpPort };
};

/**
 * Whether to mount the overlay agent: `auto` does when the edge could attach an overlay at all
 * (root for the namespaces and interfaces, wireguard-go for the interface); `on` insists (attach
 * answers `failed` with the reason when it cannot), `off` never.
 */
export const decideOverlay = async (
  mode: 'auto' | 'on' | 'off',
  io: Pick<EdgeCliIo, 'env'>,
  uid: number = process.getuid?.() ?? -1,
): Promise<{ enabled: boolean; reason: string }> => {
  if (mode === 'off') return { enabled: false, reason: '--overlay off' };
  if (mode === 'on') return { enabled: true, reason: '--overlay on' };
  if (uid !== 0) return { enabled: false, reason: 'not running as root (overlays need CAP_NET_ADMIN)' };
  const wg = await findExecutable('wireguard-go', io.env['PATH'] ?? '');
  if (wg === null) return { enabled: false, reason: 'wireguard-go is not on PATH' };
  return { enabled: true, reason: `root with ${wg}` };
};

const status = async (
  dir: string,
  policyPath: string,
  values: { simulate?: string; json?: boolean },
  io: EdgeCliIo,
): Promise<number> => {
  const identity = await loadIdentity(dir);
  const state = await StateStore.in(dir).load(identity.edgeId);
  const detection = await detectWith(io, dir, values.simulate);
  const policyText = await readTextOrUndefined(policyPath);
  const policy = policyText === undefined ? null : parsePolicy(policyText);
  const shared = policy?.ok ? resolveSharedGpus(policy.policy, detection.inventory) : null;
  const problems = [
    ...(policyText === undefined ? [{ path: '', message: `cannot read ${policyPath}` }] : []),
    ...(policy && !policy.ok ? policy.issues : []),
    ...(shared?.errors ?? []),
  ];
  // What the edge last reported; before its first start, what the default runtime would give.
  const isolation =
    state.isolation !== null
      ? { reported: true, ...state.isolation }
      : policy?.ok
        ? { reported: false, ...(await dockerIsolationFor(policy.policy)) }
        : null;
  const now = Date.now();
  const report = {
    edgeId: identity.edgeId,
    directory: dir,
    policy: { file: policyPath, valid: problems.length === 0, problems, warnings: shared?.warnings ?? [] },
    simulated: detection.inventory.simulated,
    backends: detection.backends.map((b) => ({ name: b.name, status: b.status, detail: b.detail })),
    gpus: detection.inventory.gpus.map((g) => ({
      id: `${g.vendor}:${g.index}`,
      uuid: g.uuid,
      model: g.model,
      vramGiB: Math.round((g.vramBytes / 1024 ** 3) * 10) / 10,
      shared: shared?.uuids.includes(g.uuid) ?? false,
      utilizationPercent:
        detection.backends.flatMap((b) => b.gpus).find((d) => d.uuid === g.uuid)?.utilizationPercent ?? null,
    })),
    host: {
      cpuCores: detection.host.cpu.logicalCores,
      memoryGiB: Math.round(detection.host.memoryBytes / 1024 ** 3),
      containerRuntimes: detection.host.containerRuntimes,
    },
    isolation,
    registeredAt: state.registeredAt,
    reportsSigned: state.sequence,
    reservations: activeReservations(state.reservations, now, reservationsInUseUntil(state.ranks)),
    ranks: state.ranks.map((r) => ({
      jobId: r.jobId,
      attempt: r.attempt,
      rank: r.rank,
      state: r.state,
      startedAt: r.startedAt,
      exitCode: r.exitCode,
      stopReason: r.stopReason,
    })),
  };
  if (values.json) {
    io.out(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    const lines = [
      `edge ${report.edgeId}${report.simulated ? '  [SIMULATED inventory]' : ''}`,
      `registered: ${report.registeredAt ?? 'never'}   signed reports: ${report.reportsSigned}`,
      `policy: ${policyPath} — ${report.policy.valid ? 'valid' : 'INVALID'}`,
      ...problems.map((p) => `  ${p.path || '(root)'}: ${p.message}`),
      ...report.policy.warnings.map((w) => `  warning: ${w.message}`),
      'detection:',
      ...report.backends.map((b) => `  ${b.name.padEnd(9)} ${b.status}${b.detail ? ` — ${b.detail}` : ''}`),
      `GPUs (${report.gpus.length}):`,
      ...report.gpus.map(
        (g) =>
          `  ${g.id.padEnd(9)} ${g.model} ${g.vramGiB} GiB  ${g.shared ? 'shared' : 'not shared'}${g.utilizationPercent === null ? '' : `  ${g.utilizationPercent}% busy`}  ${g.uuid}`,
      ),
      `host: ${report.host.cpuCores} cores, ${report.host.memoryGiB} GiB, runtimes: ${report.host.containerRuntimes.map((r) => r.name).join(', ') || 'none'}`,
      isolation === null
        ? 'isolation: unknown (the edge has not started and the policy is invalid)'
        : `isolation: ${isolation.level} — ${isolation.detail}${isolation.reported ? '' : '\n  (not reported yet: what start with the default runtime, docker, would report)'}`,
      `ranks: ${report.ranks.filter((r) => r.state === 'running').length} running, ${report.ranks.filter((r) => r.state === 'exited').length} exited`,
      `reservations: ${report.reservations.length === 0 ? 'none' : report.reservations.map((r) => `${r.reservationId} (job ${r.jobId}, ${r.gpuUuids.length} GPUs, until ${r.expiresAt})`).join('; ')}`,
      '',
    ];
    io.out(lines.join('\n'));
  }
  return problems.length === 0 ? ExitCode.Ok : ExitCode.Failed;
};
