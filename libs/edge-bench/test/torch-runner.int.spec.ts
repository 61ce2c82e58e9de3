import { BenchmarkProfileSchema } from '@gpunet/contracts';
import { describe, expect, it } from 'vitest';
import { BenchmarkRunnerError, runTorchBenchmark } from '../src';

describe('runTorchBenchmark on this machine (Debian python3-torch, CPU)', () => {
  it('measures the CPU for real and returns a versioned, time-stamped profile labelled cpu', async () => {
    const before = Date.now();
    const profile = await runTorchBenchmark({
      maxDurationMs: 45_000,
      ttlMs: 3_600_000,
      quick: true,
      minTrialSeconds: 0.05,
      trials: 2,
      profileId: 'cpu-int-test',
    });
    expect(BenchmarkProfileSchema.parse(profile)).toEqual(profile);
    expect(profile).toMatchObject({ profileVersion: 1, profileId: 'cpu-int-test', kind: 'cpu' });
    expect(profile.runner).toMatchObject({ name: 'gpu-bench', backend: 'cpu' });
    expect(profile.runner.torch).toMatch(/^1\.13/);
    const cpu = profile.devices[0]!;
    expect(cpu.kind).toBe('cpu');
    expect(cpu.matmulTflops.fp32).toBeGreaterThan(0);
    expect(cpu.memoryBandwidthGBps).toBeGreaterThan(0);
    expect(cpu.hostToDeviceGBps).toBeNull();
    expect(Date.parse(profile.measuredAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(profile.expiresAt) - Date.parse(profile.measuredAt)).toBe(3_600_000);
  });

  it('says DEVICE_ABSENT when asked for a GPU on a machine without one', async () => {
    const error = await runTorchBenchmark({
      device: 'cuda',
      maxDurationMs: 30_000,
      ttlMs: 60_000,
      quick: true,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BenchmarkRunnerError);
    expect((error as BenchmarkRunnerError).code).toBe('DEVICE_ABSENT');
  });

  it('kills a run that outlives its bound, and reports a missing interpreter', async () => {
    const slow = await runTorchBenchmark({ maxDurationMs: 300, ttlMs: 60_000 }).catch((e: unknown) => e);
    expect((slow as BenchmarkRunnerError).code).toBe('RUNNER_TIMED_OUT');
    const missing = await runTorchBenchmark({
      python: '/nonexistent/python3',
      maxDurationMs: 5_000,
      ttlMs: 60_000,
    }).catch((e: unknown) => e);
    expect((missing as BenchmarkRunnerError).code).toBe('RUNNER_MISSING');
  });
});
