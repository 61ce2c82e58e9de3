import { Writable } from 'node:stream';
import { createLogger, defineCounter } from '@gpunet/telemetry';
import { Inject, Injectable, Module, type OnApplicationBootstrap } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { runService, SERVICE_CONTEXT, type ServiceContext } from '../src';

const memoryLogger = () => {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger({ service: 'probe', destination }) };
};

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
      runService({ name: 'probe', module: () => BrokenModule, handleSignals: false, logger }),
    ).rejects.toThrow('cannot reach the database');
    expect(lines.some((l) => l['level'] === 60 || l['level'] === 'fatal')).toBe(true);
  });

  it('refuses a bad METRICS_PORT with the variable named', async () => {
    const { logger } = memoryLogger();
    await expect(
      runService({
        name: 'probe',
        module: () => ProbeModule,
        handleSignals: false,
        logger,
        env: { METRICS_PORT: 'abc' },
      }),
    ).rejects.toThrow(/METRICS_PORT/);
  });
});
