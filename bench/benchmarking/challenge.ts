/**
 * bench/benchmarking/challenge — what one GPU challenge costs (ADR 0070), and what spot checks cost
 * a running job.
 *
 *   npm run bench:challenge [-- --sizes 256,1024,2048 --job-seconds 20 --every-seconds 5]
 *
 * Per size: the verifier's CPU (newOpening + verifyOpening; sizing is arithmetic), the edge's wall
 * time (the real Python worker: commit, then open), the bytes each way (the JSON of the commands and
 * replies as NATS carries them), the worker's and the verifier's peak RSS. The edge computes on this
 * machine's CPU (bf16 through oneDNN, one thread).
 *
 * Spot checks: a CPU "job" (a Python process multiplying bf16 1024×1024 matrices in a loop, one
 * thread) runs for --job-seconds alone, then again with a challenge (n = 1024, commit + open) every
 * --every-seconds. The rate is scaled up from the default (1 per GPU-hour) by 3600 / every-seconds;
 * the overhead at the default rate is the measured one divided by that factor. Writes
 * bench/benchmarking/results-challenge.json; the table is in results-challenge.md.
 */
import { buildEnvelope, OpenChallengeOnEdge, RunChallengeOnEdge } from '@gpunet/contracts';
import { newOpening, PythonChallengeWorker, verifyOpening } from '@gpunet/edge-bench';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '256,1024,2048' },
    'job-seconds': { type: 'string', default: '20' },
    'every-seconds': { type: 'string', default: '5' },
  },
});
const sizes = values.sizes.split(',').map(Number);
const jobSeconds = Number(values['job-seconds']);
const everySeconds = Number(values['every-seconds']);

const peakRssMb = (pid: number | undefined): number => {
  if (pid === undefined) return 0;
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
};
const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** One challenge through the worker, as the verifier and the edge would exchange it. */
const challenge = async (worker: PythonChallengeWorker, n: number) => {
  const challengeId = `bench-${n}-${hex(4)}`;
  const seed = hex(32);
  const command = { challengeId, seed, gpuUuid: 'GPU-bench', n, dtype: 'bf16' as const, deadlineMs: 600_000 };
  const sentCommit = JSON.stringify(buildEnvelope(RunChallengeOnEdge, command, { streamId: challengeId }));
  const edgeStart = performance.now();
  const committed = await worker.commit({ ...command, device: { index: 0 } });
  const commitMs = performance.now() - edgeStart;
  if (!committed.ok) throw new Error(`${committed.code}: ${committed.message}`);
  const commitReply = JSON.stringify({
    outcome: 'committed',
    challengeId,
    root: committed.root,
    edgeComputeMs: committed.edgeComputeMs,
  });
  const cpu0 = process.cpuUsage();
  const { rows, freivaldsSeed } = newOpening(n, 8, (size) => randomBytes(size));
  let verifierCpu = process.cpuUsage(cpu0);
  const sentOpen = JSON.stringify(
    buildEnvelope(OpenChallengeOnEdge, { challengeId, rows, freivaldsSeed }, { streamId: challengeId }),
  );
  const openStart = performance.now();
  const opened = await worker.open({ challengeId, rows, freivaldsSeed });
  const openMs = performance.now() - openStart;
  if (!opened.ok) throw new Error(`${opened.code}: ${opened.message}`);
  const reply = { outcome: 'opened' as const, challengeId, rows: opened.rows, product: opened.product };
  const openReply = JSON.stringify(reply);
  const cpu1 = process.cpuUsage();
  const verdict = verifyOpening({ seed, n, root: committed.root, rows, freivaldsSeed, reply });
  const verify = process.cpuUsage(cpu1);
  verifierCpu = { user: verifierCpu.user + verify.user, system: verifierCpu.system + verify.system };
  if (!verdict.ok) throw new Error(`an honest challenge failed: ${verdict.kind} ${verdict.detail}`);
  return {
    n,
    verifierCpuMs: (verifierCpu.user + verifierCpu.system) / 1000,
    edgeCommitMs: commitMs,
    edgeOpenMs: openMs,
    bytesToEdge: Buffer.byteLength(sentCommit) + Buffer.byteLength(sentOpen),
    bytesFromEdge: Buffer.byteLength(commitReply) + Buffer.byteLength(openReply),
  };
};

const JOB = `
import sys, time, torch
torch.set_num_threads(1)
a = torch.randn(1024, 1024).bfloat16(); b = torch.randn(1024, 1024).bfloat16()
a @ b
end = time.perf_counter() + float(sys.argv[1]); count = 0; start = time.perf_counter()
while time.perf_counter() < end:
    a @ b; count += 1
print(count / (time.perf_counter() - start))
`;
const runJob = (seconds: number): Promise<number> =>
  new Promise((resolvePromise, reject) => {
    const child = spawn('/usr/bin/python3', ['-B', '-c', JOB, String(seconds)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.on('exit', (code) =>
      code === 0 ? resolvePromise(Number(out.trim())) : reject(new Error(`job exited ${code}`)),
    );
  });

const main = async () => {
  const worker = new PythonChallengeWorker({ threads: 1 });
  await worker.warm([{ index: 0 }]);
  const perSize = [];
  for (const n of sizes) {
    await challenge(worker, n); // the first at a size pays one-time allocations
    const runs = [await challenge(worker, n), await challenge(worker, n), await challenge(worker, n)];
    const median = <K extends keyof (typeof runs)[0]>(k: K) =>
      runs.map((r) => r[k]).sort((x, y) => x - y)[1]!;
    perSize.push({
      n,
      verifierCpuMs: median('verifierCpuMs'),
      edgeCommitMs: median('edgeCommitMs'),
      edgeOpenMs: median('edgeOpenMs'),
      bytesToEdge: median('bytesToEdge'),
      bytesFromEdge: median('bytesFromEdge'),
      workerPeakRssMb: peakRssMb(worker.pid),
      verifierPeakRssMb: process.resourceUsage().maxRSS / 1024,
    });
    console.log(perSize.at(-1));
  }

  const alone = await runJob(jobSeconds);
  const job = runJob(jobSeconds);
  const checks: number[] = [];
  const started = performance.now();
  while (performance.now() - started < (jobSeconds - 1) * 1000) {
    await new Promise((r) => setTimeout(r, everySeconds * 1000));
    const t = performance.now();
    await challenge(worker, 1024);
    checks.push(performance.now() - t);
  }
  const withChecks = await job;
  await worker.close();
  const scale = 3600 / everySeconds;
  const measuredOverheadPct = ((alone - withChecks) / alone) * 100;
  const spot = {
    jobSeconds,
    everySeconds,
    challenges: checks.length,
    challengeWallMs: checks,
    jobRateAlone: alone,
    jobRateWithChecks: withChecks,
    measuredOverheadPct,
    rateScale: scale,
    overheadAtDefaultRatePct: measuredOverheadPct / scale,
  };
  console.log(spot);
  const results = {
    date: new Date().toISOString(),
    machine: `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}`,
    perSize,
    spot,
  };
  writeFileSync(
    resolve(import.meta.dirname, 'results-challenge.json'),
    `${JSON.stringify(results, null, 2)}\n`,
  );
};

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
