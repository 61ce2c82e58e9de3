import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@gpunet/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { ProcessRuntime } from '../src/infra/runtime/process.runtime';
import { RANK_LABELS, type RankLaunch, RankStartError } from '../src/app/rank-runtime.port';

const dirs: string[] = [];
const tempDir = async () => {
  const d = await mkdtemp(join(tmpdir(), 'gpunet-process-runtime-'));
  dirs.push(d);
  return d;
};
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const startTimeOf = async (pid: number): Promise<string> => {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
};

const alive = async (pid: number): Promise<boolean> => {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
};

const launch = (dir: string, over: Partial<RankLaunch> = {}): RankLaunch => ({
  jobId: 'job-1',
  attempt: 1,
  rank: 0,
  image: null,
  cmd: ['/bin/true'],
  entrypoint: null,
  env: {},
  workspace: dir,
  workingDir: dir,
  gpuUuids: [],
  gpuVendor: null,
  limits: { cpuMillicores: 0, memoryBytes: 0, pids: null },
  netns: null,
  labels: { [RANK_LABELS.edge]: 'E1' },
  ...over,
});

describe('the process runtime', () => {
  it('reaps the recorded orphans of this edge only, and never a recycled pid', async () => {
    const stateDir = await tempDir();
    const runtime = new ProcessRuntime({ stateDir });
    // An orphan of this edge: its own session, as the runtime starts ranks.
    const orphan = spawn('/bin/sleep', ['1000'], { detached: true, stdio: 'ignore' });
    orphan.unref();
    const pid = orphan.pid!;
    const record = async (name: number, p: number, startTime: string, edge: string) =>
      writeFile(
        join(stateDir, `${name}.json`),
        JSON.stringify({ pid: p, startTime, labels: { [RANK_LABELS.edge]: edge } }),
      );
    await record(pid, pid, await startTimeOf(pid), 'E1');
    // The test process itself under a record with another start time: a recycled pid.
    await record(process.pid, process.pid, '1', 'E1');
    // Another edge's rank is not this edge's to reap.
    const other = spawn('/bin/sleep', ['1000'], { detached: true, stdio: 'ignore' });
    await record(other.pid!, other.pid!, await startTimeOf(other.pid!), 'E2');

    expect(await runtime.reapOrphans('E1')).toBe(1);
    await waitFor(async () => !(await alive(pid)), { description: 'the orphan killed' });
    expect(await alive(process.pid)).toBe(true);
    expect(await alive(other.pid!)).toBe(true);
    other.kill('SIGKILL');
  });

  it('keeps the output of a rank that exits at once (nothing lost before anyone listens)', async () => {
    const dir = await tempDir();
    const runtime = new ProcessRuntime({ stateDir: join(dir, 'state') });
    for (let i = 0; i < 20; i++) {
      const rank = await runtime.start(launch(dir, { cmd: ['/bin/echo', `hello ${i}`] }));
      const lines: string[] = [];
      rank.onOutput((stream, line) => lines.push(`${stream}:${line}`));
      expect(await rank.exited).toMatchObject({ exitCode: 0, signal: null, reason: null });
      expect(lines).toEqual([`stdout:hello ${i}`]);
    }
  });

  it('needs root for a network namespace (RUNTIME_UNAVAILABLE) and names a missing binary', async () => {
    const dir = await tempDir();
    const notRoot = new ProcessRuntime({ stateDir: join(dir, 'state'), uid: 1000 });
    const error = await notRoot.start(launch(dir, { netns: 'gn-job-1' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RankStartError);
    expect(error).toMatchObject({ code: 'RUNTIME_UNAVAILABLE', field: 'overlay' });
    await expect(notRoot.start(launch(dir, { cmd: ['no-such-binary-here'] }))).rejects.toMatchObject({
      code: 'START_FAILED',
      field: 'cmd[0]',
    });
  });

  it.skipIf(!existsSync('/usr/bin/python3') || !existsSync('/usr/bin/prlimit'))(
    'limits the address space of a CPU rank (prlimit)',
    async () => {
      const dir = await tempDir();
      const runtime = new ProcessRuntime({ stateDir: join(dir, 'state') });
      const rank = await runtime.start(
        launch(dir, {
          cmd: ['/usr/bin/python3', '-c', 'b = bytearray(512 * 1024 * 1024)'],
          limits: { cpuMillicores: 0, memoryBytes: 128 * 1024 ** 2, pids: 64 },
        }),
      );
      const lines: string[] = [];
      rank.onOutput((_s, l) => lines.push(l));
      const exit = await rank.exited;
      expect(exit.exitCode).not.toBe(0);
      expect(lines.join('\n')).toContain('MemoryError');
    },
    30_000,
  );
});
