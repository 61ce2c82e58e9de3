import { DeadLettersStream, type PayloadOf } from '@gpunet/contracts';
import {
  connectNats,
  durable,
  EVENTING,
  type EventContext,
  type EventingRuntime,
  PermanentHandlerError,
} from '@gpunet/eventing';
import { natsUrl, testNamespace, waitFor } from '@gpunet/testing';
import {
  type ArgumentsHost,
  Catch,
  Controller,
  type ExceptionFilter,
  Get,
  Inject,
  Injectable,
  Module,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyReply } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { runService } from '../src';
import {
  createProbeTable,
  dropProbeNamespace,
  memoryLogger,
  probeEventing,
  ProbeSent,
  ProbeStream,
} from './support';

const prefix = testNamespace('runhttp');
const schema = testNamespace('runhttp');

class TeapotError extends Error {}

/** The HTTP side's own filter: it must not reach the transport's handlers. */
@Catch()
class TeapotFilter implements ExceptionFilter {
  catch(_error: unknown, host: ArgumentsHost): void {
    void host.switchToHttp().getResponse<FastifyReply>().status(418).send({ filtered: true });
  }
}

@Injectable()
class Hooks implements OnApplicationBootstrap {
  bootstraps = 0;
  onApplicationBootstrap(): void {
    this.bootstraps += 1;
  }
}

@Controller()
class ProbeApi {
  constructor(@Inject(EVENTING) private readonly eventing: EventingRuntime) {}

  @Get('probes')
  async probes() {
    const rows = await this.eventing.db.query<{ probe_id: string }>(
      `SELECT probe_id FROM "${schema}".http_probes ORDER BY probe_id`,
    );
    return { probeIds: rows.map((r) => r.probe_id) };
  }

  @Get('teapot')
  teapot(): never {
    throw new TeapotError('short and stout');
  }
}

@Controller()
class ProbeEvents {
  @EventPattern(ProbeSent, durable('probe-http-sent'))
  async sent(@Payload() probe: PayloadOf<typeof ProbeSent>, @Ctx() ctx: EventContext) {
    if (probe.probeId === 'refused')
      throw new PermanentHandlerError('PROBE_REFUSED', 'probe refused for good');
    await ctx.tx.query(`INSERT INTO "${ctx.tx.schema}".http_probes (probe_id) VALUES ($1)`, [probe.probeId]);
  }
}

const failures: { error: unknown; context: string }[] = [];

@Module({
  imports: [
    probeEventing(
      'probe-http',
      { prefix, schema },
      {
        streams: [ProbeStream, DeadLettersStream],
        onError: (error, context) => failures.push({ error, context }),
      },
    ),
  ],
  controllers: [ProbeApi, ProbeEvents],
  providers: [Hooks],
})
class ProbeHttpModule {}

afterAll(() => dropProbeNamespace(prefix, schema));

describe('runService with http: a hybrid application', () => {
  it('serves HTTP with its own filters and the transport with RethrowRpcFilter; hooks run once', async () => {
    await createProbeTable(schema, 'http_probes');
    const { lines, logger } = memoryLogger('probe-http');
    const service = await runService({
      name: 'probe-http',
      module: () => ProbeHttpModule,
      http: (context) => ({
        adapter: new FastifyAdapter(),
        port: 0,
        host: '127.0.0.1',
        configure: (app) => {
          context.logger.info('http configured');
          app.useGlobalFilters(new TeapotFilter());
        },
      }),
      handleSignals: false,
      logger,
      env: {},
    });
    const publisher = await connectNats({ servers: natsUrl(), name: 'probe-http-publisher' });
    try {
      expect(service.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(lines.find((l) => l['msg'] === 'probe-http started')).toMatchObject({ url: service.url });
      expect(lines.some((l) => l['msg'] === 'http configured')).toBe(true);
      expect(service.app.get(Hooks).bootstraps).toBe(1);
      expect(service.transport?.describe().consumers).toEqual([
        { name: 'probe-http-sent', stream: 'PROBES', types: ['probe.sent'] },
      ]);

      const eventing = service.app.get<EventingRuntime>(EVENTING);
      for (const probeId of ['p1', 'refused']) {
        const envelope = eventing.envelopes.message(ProbeSent, { probeId }, `probe-${probeId}`, {
          correlationId: 'r',
          causationId: 'r',
        });
        await publisher.js.publish(ProbeSent.subject(undefined, prefix), JSON.stringify(envelope));
      }
      await waitFor(
        async () => {
          const body = (await (await fetch(`${service.url}/probes`)).json()) as { probeIds: string[] };
          return body.probeIds.includes('p1') ? true : null;
        },
        { description: 'probe applied through the durable consumer', timeoutMs: 15_000 },
      );
      // The handler's error reached the consumer as thrown: dead-lettered at once, not retried as
      // Nest's "Internal server error".
      await waitFor(() => (failures.some((f) => f.context.includes('dead-lettered')) ? true : null), {
        description: 'the refused probe dead-lettered',
        timeoutMs: 15_000,
      });
      const deadLettered = failures.find((f) => f.context.includes('dead-lettered'))!;
      expect(deadLettered.error).toBeInstanceOf(PermanentHandlerError);
      expect(deadLettered.context).toContain('after 1 deliveries');

      const teapot = await fetch(`${service.url}/teapot`);
      expect(teapot.status).toBe(418);
      expect(await teapot.json()).toEqual({ filtered: true });
    } finally {
      await publisher.close();
      await service.close();
    }
    expect(service.transport?.consuming).toBe(false);
    await expect(fetch(`${service.url}/probes`)).rejects.toThrow();
  });
});
