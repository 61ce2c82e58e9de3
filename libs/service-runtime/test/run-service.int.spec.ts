import { defineCounter } from '@gpunet/telemetry';
import { Inject, Injectable, Module, type OnApplicationBootstrap } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { runService, SERVICE_CONTEXT, type ServiceContext } from '../src';
import { memoryLogger } from './support';

@Injectable()
class Worker implements OnApplicationBootstrap {
  constructor(@Inject(SERVICE_CONTEXT) private readonly context: ServiceContext) {}
  onApplicationBootstrap(): void {
    const started = defineCounter(this.context.metrics, {
      subsystem: 'probe',
      name: 'starts',
      help: 'starts',
    });
    started.inc();
    this.context.logger.info('worker ready');
    this.context.logger.debug('worker details');
  }
}

@Module({ providers: [Worker] })
class ProbeModule {}

describe('runService', () => {
  it('boots the module with the context, serves /metrics and /healthz, logs JSON, closes cleanly', async () => {
    const { lines, logger } = memoryLogger();
    const service = await runService({
      name: 'probe',
      module: () => ProbeModule,
      transport: false,
      metricsPort: 0,
      handleSignals: false,
      logger,
    });
    try {
      const base = `http://127.0.0.1:${service.metricsPort}`;
      const metrics = await (await fetch(`${base}/metrics`)).text();
      expect(metrics).toMatch(/gpunet_probe_starts_total\{service="probe"\} 1/);
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      expect(lines.some((l) => l['msg'] === 'worker ready' && l['service'] === 'probe')).toBe(true);
    } finally {
      await service.close();
    }
    await expect(fetch(`http://127.0.0.1:${service.metricsPort}/healthz`)).rejects.toThrow();
    expect(lines.at(-1)?.['msg']).toBe('probe stopped');
  });

  it('a module that fails to start is reported and rethrown', async () => {
    @Injectable()
    class Broken implements OnApplicationBootstrap {
      onApplicationBootstrap(): void {
        throw new Error('cannot reach the database');
      }
    }
    @Module({ providers: [Broken] })
    class BrokenModule {}
    const { lines, logger } = memoryLogger();
    await expect(
      runService({
        name: 'probe',
        module: () => BrokenModule,
        transport: false,
        handleSignals: false,
        logger,
      }),
    ).rejects.toThrow('cannot reach the database');
    expect(lines.some((l) => l['level'] === 60 || l['level'] === 'fatal')).toBe(true);
  });

  /** Boots the probe module with this environment, logging into memory. */
  const bootProbe = (env: Record<string, string>) => {
    const { lines, logger } = memoryLogger();
    return {
      lines,
      started: runService({
        name: 'probe',
        module: () => ProbeModule,
        transport: false,
        handleSignals: false,
        logger,
        env,
      }),
    };
  };

  it('refuses a bad METRICS_PORT with the variable named', async () => {
    await expect(bootProbe({ METRICS_PORT: 'abc' }).started).rejects.toThrow(/METRICS_PORT/);
  });

  it('LOG_LEVEL sets the lowest level written; a bad one is refused with the variable named', async () => {
    const written = async (level: string) => {
      const { lines, started } = bootProbe({ LOG_LEVEL: level });
      await (await started).close();
      return lines.map((l) => l['msg']);
    };
    expect(await written('debug')).toEqual(expect.arrayContaining(['worker ready', 'worker details']));
    const warn = await written('WARN');
    expect(warn).not.toContain('worker ready');
    expect(warn).not.toContain('worker details');

    const { lines, started } = bootProbe({ LOG_LEVEL: 'loud' });
    await expect(started).rejects.toThrow(
      /LOG_LEVEL: must be one of trace, debug, info, warn, error, fatal, not "loud"/,
    );
    expect(lines.some((l) => l['level'] === 'fatal' || l['level'] === 60)).toBe(true);
  });
});
