import { type ChildProcess, spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { delimiter, isAbsolute, join } from 'node:path';
import { z } from 'zod';
import {
  RANK_LABELS,
  type RankExit,
  type RankLaunch,
  type RankRuntime,
  RankStartError,
  type RunningRank,
} from '../../app/rank-runtime.port';
import { type EdgeLogger, silentLogger } from '../logger';
import { LineSplitter } from './line-splitter';

/*
 * The process runtime (development and CI): a rank is a child process of the edge, started
 * without a shell in its own session (setsid: process group = session = the rank's pid), so that a
 * stop signals the whole tree it forked. What it sees:
 *
 *   - environment: exactly the launch's (plus a default PATH and the GPU visibility variables) —
 *     never the edge's own, which may hold secrets;
 *   - limits: `prlimit` (util-linux) sets RLIMIT_AS (memory) and RLIMIT_NPROC (pids) before it
 *     execs the rank, where the binary exists. RLIMIT_AS is left off for GPU ranks (CUDA/ROCm map
 *     far more address space than they use), RLIMIT_NPROC counts per user and root ignores it, and
 *     CPU shares are not enforced: the docker runtime is the isolation providers run; this one
 *     trusts the code it starts;
 *   - network: with `netns`, `ip netns exec <name>` (root only; it execs in place, the pid stays).
 *
 * Every started rank leaves a record (pid, /proc start time, labels) in `stateDir`, removed when it
 * has exited; after a crash of the edge, `reapOrphans` kills what the records name — only after
 * checking /proc that the pid is still the same process (a recycled pid is never signalled).
 */

/** PATH a rank gets when its environment names none. */
export const DEFAULT_RANK_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Lines kept for the first output listener, and how long the pipes may wait for it. */
const EARLY_LINES = 1024;
const EARLY_WAIT_MS = 5_000;

/** How long the pipes may stay open after the rank's leader exited (grandchildren holding them). */
const PIPE_DRAIN_MS = 2_000;

export interface ProcessRuntimeOptions {
  /** Where the pid records live (created 0700); one directory per edge. */
  readonly stateDir: string;
  readonly log?: EdgeLogger;
  /** Path of `prlimit`; null: no resource limits. Default: `/usr/bin/prlimit` when executable. */
  readonly prlimit?: string | null;
  /** Path of `ip` (for `netns`). Default `/usr/sbin/ip` or `/sbin/ip`. */
  readonly ip?: string;
  /** The edge's uid (tests pretend not to be root). Default `process.getuid()`. */
  readonly uid?: number;
}

const PidRecordSchema = z.strictObject({
  pid: z.int().min(1),
  /** Field 22 of /proc/<pid>/stat: clock ticks after boot; with the pid, the process's identity. */
  startTime: z.string().regex(/^[0-9]+$/),
  labels: z.record(z.string(), z.string()),
});
type PidRecord = z.infer<typeof PidRecordSchema>;

interface ProcStat {
  readonly pgrp: number;
  readonly session: number;
  readonly startTime: string;
}

/** /proc/<pid>/stat, parsed after the command name (which may hold spaces and parentheses). */
const procStat = async (pid: number): Promise<ProcStat | null> => {
  let text: string;
  try {
    text = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state): pgrp is field 5, session 6, starttime 22.
  const [pgrp, session, startTime] = [fields[2], fields[3], fields[19]];
  if (pgrp === undefined || session === undefined || startTime === undefined) return null;
  return { pgrp: Number(pgrp), session: Number(session), startTime };
};

const signalGroup = (pgid: number, signal: NodeJS.Signals): boolean => {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false; // ESRCH: the group is gone
  }
};

const executable = (path: string): Promise<boolean> =>
  access(path, constants.X_OK).then(
    () => stat(path).then((s) => s.isFile()),
    () => false,
  );

/** `cmd[0]` as the kernel will find it with the rank's PATH; null when it is not there. */
export const resolveExecutable = async (name: string, path: string, cwd: string): Promise<string | null> => {
  if (name.includes('/')) {
    const full = isAbsolute(name) ? name : join(cwd, name);
    return (await executable(full)) ? full : null;
  }
  for (const dir of path.split(delimiter).filter((d) => d !== ''))
    if (await executable(join(dir, name))) return join(dir, name);
  return null;
};

/** The environment a rank gets: its own, a PATH, and the GPUs it may see (never the edge's). */
export const rankEnvironment = (launch: RankLaunch): Record<string, string> => {
  const env: Record<string, string> = { ...launch.env };
  env['PATH'] ??= DEFAULT_RANK_PATH;
  const uuids = launch.gpuUuids.join(',');
  // CUDA takes UUIDs (GPU-…); an empty value hides every GPU from a CPU rank.
  env['CUDA_VISIBLE_DEVICES'] = launch.gpuVendor === 'nvidia' ? uuids : '';
  if (launch.gpuVendor === 'amd') env['ROCR_VISIBLE_DEVICES'] = uuids;
  return env;
};

const firstExisting = async (paths: readonly string[]): Promise<string | null> => {
  for (const p of paths) if (await executable(p)) return p;
  return null;
};

interface Output {
  readonly onOutput: RunningRank['onOutput'];
  readonly pipesClosed: Promise<unknown>;
  /** Emits the last partial lines. */
  end(): void;
}

/** Reads a child's stdout and stderr from its first byte, as lines (see `LineSplitter`). */
const captureOutput = (child: ChildProcess): Output => {
  const listeners: ((stream: 'stdout' | 'stderr', line: string) => void)[] = [];
  // Lines that come before anyone listens (the rank may write before `start` has returned) wait
  // for the first listener. When that buffer is full the pipes pause until the listener comes —
  // moments after `start` returns; should none come within EARLY_WAIT_MS, reading resumes and
  // what does not fit is lost.
  let early: [stream: 'stdout' | 'stderr', line: string][] | null = [];
  let gaveUp = false;
  const emit = (stream: 'stdout' | 'stderr') => (line: string) => {
    if (early !== null) {
      // Past the bound only what the paused pipes still held comes in (Node also resumes them
      // when the child exits): bounded by the pipes' buffers, kept.
      if (early.length < EARLY_LINES || !gaveUp) early.push([stream, line]);
      if (early.length >= EARLY_LINES && !gaveUp) {
        child.stdout!.pause();
        child.stderr!.pause();
      }
      return;
    }
    for (const l of listeners) l(stream, line);
  };
  const giveUp = setTimeout(() => {
    gaveUp = true;
    child.stdout!.resume();
    child.stderr!.resume();
  }, EARLY_WAIT_MS);
  giveUp.unref();
  const splitters = {
    stdout: new LineSplitter(emit('stdout')),
    stderr: new LineSplitter(emit('stderr')),
  };
  // Read as fast as the rank writes (never paused): the agent drops lines rather than block.
  child.stdout!.on('data', (c: Buffer) => splitters.stdout.push(c));
  child.stderr!.on('data', (c: Buffer) => splitters.stderr.push(c));
  const closed = (s: NodeJS.ReadableStream) =>
    new Promise<void>((r) => {
      s.once('close', () => r());
      s.once('error', () => r());
    });
  const pipesClosed = Promise.all([closed(child.stdout!), closed(child.stderr!)]);

  return {
    pipesClosed,
    end: () => {
      splitters.stdout.end();
      splitters.stderr.end();
    },
    onOutput: (listener) => {
      listeners.push(listener);
      const waiting = early ?? [];
      early = null;
      clearTimeout(giveUp);
      for (const [stream, line] of waiting) listener(stream, line);
      child.stdout!.resume();
      child.stderr!.resume();
    },
  };
};

export class ProcessRuntime implements RankRuntime {
  readonly kind = 'process' as const;
  private readonly log: EdgeLogger;
  private readonly uid: number;
  private prlimitPath: string | null | undefined;

  constructor(private readonly options: ProcessRuntimeOptions) {
    this.log = options.log ?? silentLogger;
    this.uid = options.uid ?? process.getuid?.() ?? -1;
    if (options.prlimit !== undefined) this.prlimitPath = options.prlimit;
  }

  unavailable(): Promise<string | null> {
    return Promise.resolve(
      process.platform === 'linux' ? null : `the process runtime needs Linux; this is ${process.platform}`,
    );
  }

  async start(launch: RankLaunch): Promise<RunningRank> {
    const argv = [...(launch.entrypoint ?? []), ...launch.cmd];
    if (argv.length === 0) throw new RankStartError('the process runtime needs a command', 'cmd');
    const env = rankEnvironment(launch);
    const binary = await resolveExecutable(argv[0]!, env['PATH']!, launch.workingDir);
    if (binary === null)
      throw new RankStartError(
        `${argv[0]!.slice(0, 256)} is not an executable file (PATH ${env['PATH']!.slice(0, 256)})`,
        launch.entrypoint ? 'entrypoint[0]' : 'cmd[0]',
      );
    const wrapper: string[] = [];
    if (launch.netns !== null) {
      if (!/^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}$/.test(launch.netns))
        throw new RankStartError(`${launch.netns.slice(0, 80)} is not a network namespace name`, 'overlay');
      if (this.uid !== 0)
        throw new RankStartError(
          `running a rank in network namespace ${launch.netns} needs root; the edge runs as uid ${this.uid}`,
          'overlay',
          'RUNTIME_UNAVAILABLE',
        );
      const ip =
        this.options.ip ?? (await firstExisting(['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip', '/bin/ip']));
      if (ip === null)
        throw new RankStartError('`ip` (iproute2) is not installed', 'overlay', 'RUNTIME_UNAVAILABLE');
      try {
        await access(join('/run/netns', launch.netns));
      } catch {
        throw new RankStartError(
          `network namespace ${launch.netns} does not exist`,
          'overlay',
          'RUNTIME_UNAVAILABLE',
        );
      }
      wrapper.push(ip, 'netns', 'exec', launch.netns);
    }
    const prlimit = await this.prlimit();
    if (prlimit !== null) {
      const limits: string[] = [];
      if (launch.limits.memoryBytes > 0 && launch.gpuUuids.length === 0)
        limits.push(`--as=${launch.limits.memoryBytes}`);
      if (launch.limits.pids !== null) limits.push(`--nproc=${launch.limits.pids}`);
      if (limits.length > 0) wrapper.push(prlimit, ...limits, '--');
    }
    const full = [...wrapper, binary, ...argv.slice(1)];
    await mkdir(this.options.stateDir, { recursive: true, mode: 0o700 });

    const child = spawn(full[0]!, full.slice(1), {
      cwd: launch.workingDir,
      env,
      // setsid(): the rank leads a new session and process group, detached from the edge's terminal.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      shell: false,
    });
    // Listened for at once: a rank that exits within microseconds must not be missed, nor its
    // output (Node discards what unread pipes hold when the child exits).
    const output = captureOutput(child);
    const exitEvent = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once('exit', (code, signal) => resolve([code, signal])),
    );
    const spawned = await new Promise<Error | null>((resolve) => {
      child.once('spawn', () => resolve(null));
      child.once('error', (e) => resolve(e));
    });
    if (spawned !== null || child.pid === undefined)
      throw new RankStartError(`could not start ${argv[0]!.slice(0, 256)}: ${String(spawned)}`, 'cmd[0]');
    const pid = child.pid;
    const record = await this.writeRecord(pid, launch.labels);
    return this.watch(child, pid, record, exitEvent, output);
  }

  async reapOrphans(edgeId: string): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.options.stateDir);
    } catch {
      return 0;
    }
    let reaped = 0;
    for (const name of names.filter((n) => /^[0-9]+\.json$/.test(n))) {
      const path = join(this.options.stateDir, name);
      const record = await this.readRecord(path);
      if (record === null || record.labels[RANK_LABELS.edge] !== edgeId) continue;
      if (await this.reap(record)) reaped += 1;
      await rm(path, { force: true });
    }
    return reaped;
  }

  // ---------------------------------------------------------------------------------------------

  private async prlimit(): Promise<string | null> {
    if (this.prlimitPath === undefined) {
      this.prlimitPath = await firstExisting(['/usr/bin/prlimit', '/bin/prlimit']);
      if (this.prlimitPath === null)
        this.log(
          'warn',
          'prlimit (util-linux) is not installed: process ranks run without memory/pids limits',
        );
    }
    return this.prlimitPath;
  }

  private recordPath(pid: number): string {
    return join(this.options.stateDir, `${pid}.json`);
  }

  private async writeRecord(
    pid: number,
    labels: Readonly<Record<string, string>>,
  ): Promise<PidRecord | null> {
    const proc = await procStat(pid);
    if (proc === null) return null; // already gone: nothing to reap later
    const record: PidRecord = { pid, startTime: proc.startTime, labels: { ...labels } };
    const path = this.recordPath(pid);
    const temp = `${path}.tmp`;
    await writeFile(temp, JSON.stringify(record), { mode: 0o600 });
    await rename(temp, path);
    return record;
  }

  private async readRecord(path: string): Promise<PidRecord | null> {
    try {
      const parsed = PidRecordSchema.safeParse(JSON.parse(await readFile(path, 'utf8')));
      return parsed.success ? parsed.data : null;
    } catch {
      return null;
    }
  }

  /**
   * Kills what is left of a recorded rank's session. The pid is ours if /proc shows the same start
   * time. If the leader is gone, processes whose session id is the recorded pid are ours too: Linux
   * never hands out a pid that is still some process group's or session's id.
   */
  private async reap(record: PidRecord): Promise<boolean> {
    const leader = await procStat(record.pid);
    if (leader !== null && leader.startTime !== record.startTime) return false; // recycled pid
    const members = await this.sessionMembers(record.pid);
    if (leader === null && members.length === 0) return false;
    const groups = new Set([...(leader ? [record.pid] : []), ...members.map((m) => m.pgrp)]);
    for (const g of groups) signalGroup(g, 'SIGKILL');
    this.log('warn', 'killed an orphaned rank left by an earlier run of the edge', {
      pid: record.pid,
      labels: record.labels,
    });
    return true;
  }

  private async sessionMembers(sid: number): Promise<ProcStat[]> {
    let entries: string[];
    try {
      entries = await readdir('/proc');
    } catch {
      return [];
    }
    const stats = await Promise.all(
      entries.filter((e) => /^[0-9]+$/.test(e)).map((e) => procStat(Number(e))),
    );
    return stats.filter((s): s is ProcStat => s !== null && s.session === sid);
  }

  private watch(
    child: ChildProcess,
    pid: number,
    record: PidRecord | null,
    exitEvent: Promise<[number | null, NodeJS.Signals | null]>,
    output: Output,
  ): RunningRank {
    let stopSignal: NodeJS.Signals | null = null;
    let killTimer: NodeJS.Timeout | undefined;
    let done = false;
    const exited = new Promise<RankExit>((resolve) => {
      void exitEvent.then(([code, signal]) => {
        done = true;
        clearTimeout(killTimer);
        // The rank is its leader's lifetime: what it forked and left behind goes with it.
        signalGroup(pid, 'SIGKILL');
        let timer: NodeJS.Timeout | undefined;
        void Promise.race([output.pipesClosed, new Promise((r) => (timer = setTimeout(r, PIPE_DRAIN_MS)))])
          .then(async () => {
            clearTimeout(timer);
            child.stdout!.destroy();
            child.stderr!.destroy();
            output.end();
            if (record) await rm(this.recordPath(pid), { force: true }).catch(() => undefined);
          })
          .finally(() =>
            resolve({
              exitCode: code,
              signal,
              reason: stopSignal !== null ? 'stopped' : null,
            }),
          );
      });
    });
    return {
      id: String(pid),
      onOutput: output.onOutput,
      exited,
      stop: (graceMs) => {
        if (stopSignal === null && !done) {
          stopSignal = 'SIGTERM';
          signalGroup(pid, 'SIGTERM');
          killTimer = setTimeout(() => {
            stopSignal = 'SIGKILL';
            signalGroup(pid, 'SIGKILL');
          }, graceMs);
        }
        return exited;
      },
    };
  }
}
