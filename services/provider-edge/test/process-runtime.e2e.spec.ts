import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProcessRuntime } from '../src/infra/runtime/process.runtime';
import { RANK_LABELS } from '../src/app/rank-runtime.port';

// Network namespaces need root (the e2e tier runs as root).
describe.skipIf(process.getuid?.() !== 0)(
  'the process runtime runs a rank inside a job network namespace',
  () => {
    const netns = `gn-rank-${randomBytes(4).toString('hex')}`;
    let dir: string;

    beforeAll(async () => {
      execFileSync('ip', ['netns', 'add', netns]);
      dir = await mkdtemp(join(tmpdir(), 'gpunet-rank-netns-'));
    });
    afterAll(async () => {
      execFileSync('ip', ['netns', 'del', netns]);
      await rm(dir, { recursive: true, force: true });
    });

    it("sees only the namespace's interfaces, and a missing namespace is RUNTIME_UNAVAILABLE", async () => {
      const runtime = new ProcessRuntime({ stateDir: join(dir, 'state') });
      const launch = {
        jobId: 'job-ns',
        attempt: 1,
        rank: 0,
        image: null,
        cmd: ['/bin/cat', '/proc/net/dev'],
        entrypoint: null,
        env: {},
        workspace: dir,
        workingDir: dir,
        gpuUuids: [],
        gpuVendor: null,
        limits: { cpuMillicores: 0, memoryBytes: 0, pids: null },
        netns,
        labels: { [RANK_LABELS.edge]: 'E1' },
      };
      const rank = await runtime.start(launch);
      const lines: string[] = [];
      rank.onOutput((_s, l) => lines.push(l));
      expect(await rank.exited).toMatchObject({ exitCode: 0 });
      const interfaces = lines.slice(2).map((l) => l.trim().split(':')[0]);
      expect(interfaces).toEqual(['lo']);
      await expect(runtime.start({ ...launch, netns: `${netns}-gone` })).rejects.toMatchObject({
        code: 'RUNTIME_UNAVAILABLE',
        field: 'overlay',
      });
    });
  },
);
