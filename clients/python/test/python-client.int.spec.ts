import { readdirSync, readFileSync, rmSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, TestProcess } from '@gpunet/netns-testbed';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayStandIn, startGatewayStandIn } from './support/gateway-stand-in';

/*
 * The Python client (clients/python) against the REAL gateway: each tests/int/*_int_test.py module
 * runs in its own Debian python3 process, and docs/python-quickstart.md's script runs as written.
 */
const CLIENT = join(REPO_ROOT, 'clients', 'python');
const PYTHON = process.env['PYTHON'] ?? '/usr/bin/python3';
const MODULES = readdirSync(join(CLIENT, 'tests', 'int'))
  .filter((f) => f.endsWith('_int_test.py'))
  .map((f) => f.replace(/\.py$/, ''))
  .sort();

/** The first ```python block of the quickstart: the script a reader copies. */
const quickstartScript = (): string => {
  const doc = readFileSync(join(REPO_ROOT, 'docs', 'python-quickstart.md'), 'utf8');
  const block = /```python\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!block) throw new Error('docs/python-quickstart.md has no ```python block');
  return block;
};

describe('the Python client against a real gateway', () => {
  let standIn: GatewayStandIn;
  let dir = '';

  const python = (args: string[], env: Record<string, string> = {}) =>
    new TestProcess('python', [PYTHON, ...args], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        PYTHONDONTWRITEBYTECODE: '1',
        PYTHONUNBUFFERED: '1',
        GPUNET_TEST_GATEWAY: standIn.url,
        GPUNET_TEST_API_KEY: standIn.tenantKey,
        GPUNET_TEST_CONTROL: standIn.controlUrl,
        ...env,
      },
    });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gpunet-python-'));
    standIn = await startGatewayStandIn('pyclient');
  }, 90_000);

  afterAll(async () => {
    await standIn?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it('has int test modules to run', () => {
    expect(MODULES).toEqual(expect.arrayContaining(['errors_int_test', 'follow_int_test', 'jobs_int_test']));
  });

  for (const module of MODULES)
    it(`tests/int/${module}.py`, async () => {
      const proc = python([join(CLIENT, 'tools', 'run_tests.py'), 'int', `tests.int.${module}`]);
      const exit = await proc.exited;
      expect(exit.code, `${proc.output}\n[gateway]\n${standIn.gatewayOutput().slice(-3000)}`).toBe(0);
    });

  it('docs/python-quickstart.md: submits example 15, follows it to settled, prints the statement', async () => {
    const script = join(dir, 'quickstart.py');
    writeFileSync(script, quickstartScript());
    const proc = python([script], {
      GPUNET_GATEWAY: standIn.url,
      GPUNET_API_KEY: standIn.tenantKey,
      PYTHONPATH: CLIENT,
    });
    // The cluster's part: once the script has submitted, the job runs and is settled.
    const [, jobId] = await proc.waitForOutput(/submitted job (\S+)/, { timeoutMs: 30_000 });
    await standIn.lifecycle(jobId!);
    const exit = await proc.exited;
    expect(exit.code, proc.output).toBe(0);
    expect(proc.stdout).toContain(
      `submitted job ${jobId} (first-multi-provider-ddp): 4 GPUs, status submitted`,
    );
    expect(proc.stdout).toContain(`job ${jobId} completed`);
    expect(proc.stdout).toMatch(/escrowed +0\.7 NTX\n/);
    expect(proc.stdout).toMatch(/paid to providers +0\.005554 NTX\n/);
    expect(proc.stdout).toMatch(/refunded to tenant +0\.69406 NTX\n/);
    const progress = [
      'funded: 0.7 NTX in escrow',
      'placed on UAAAAAAAAAAA… (2 GPUs), UBBBBBBBBBBB… (2 GPUs)',
      'running (attempt 1)',
      'completed: 18 GPU-seconds',
      'settled: paid 0.005554 NTX to providers, fees 0.000386 NTX, refunded 0.69406 NTX',
    ];
    let at = -1;
    for (const line of progress) {
      const i = proc.stderr.indexOf(line);
      expect(i, `${line}\nin\n${proc.stderr}`).toBeGreaterThan(at);
      at = i;
    }
  });
});
