import { defineQuery, type PayloadOf } from '@gpunet/contracts';
import {
  connectNats,
  durable,
  EVENTING,
  type EventContext,
  type EventingRuntime,
  served,
} from '@gpunet/eventing';
import { natsUrl, testNamespace, waitFor } from '@gpunet/testing';
import { Controller, Inject, Module } from '@nestjs/common';
import { Ctx, EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runService } from '../src';
import { createProbeTable, dropProbeNamespace, memoryLogger, probeEventing, ProbeSent } from './support';

const prefix = testNamespace('runsvc');
const schema = testNamespace('runsvc');

const ProbesSeen = defineQuery({
  name: 'probes-seen',
  version: 1,
  description: 'the probes the service applied',
  request: z.strictObject({}),
  response: z.strictObject({ probeIds: z.array(z.string()) }),
});

@Controller()
class ProbeHandlers {
  constructor(@Inject(EVENTING) private readonly eventing: EventingRuntime) {}

  @EventPattern(ProbeSent, durable('probe-sent'))
  async sent(@Payload() probe: PayloadOf<typeof ProbeSent>, @Ctx() ctx: EventContext) {
    await ctx.tx.query(`INSERT INTO "${ctx.tx.schema}".probes (probe_id) VALUES ($1)`, [probe.probeId]);
  }

  @MessagePattern(ProbesSeen, served({}))
  async seen() {
    const rows = await this.eventing.db.query<{ probe_id: string }>(
      `SELECT probe_id FROM "${schema}".probes ORDER BY probe_id`,
    );
    return { probeIds: rows.map((r) => r.probe_id) };
  }
}

@Module({
  imports: [probeEventing('probe', { prefix, schema })],
  controllers: [ProbeHandlers],
})
class ProbeServiceModule {}

const silent = memoryLogger().logger;

afterAll(() => dropProbeNamespace(prefix, schema));

describe('runService with the JetStream transport', () => {
  it('serves the module’s controllers: events through a durable consumer, queries over request/reply', async () => {
    await createProbeTable(schema, 'probes');
    const service = await runService({
      name: 'probe',
      module: () => ProbeServiceModule,
      metricsPort: 0,
      handleSignals: false,
      logger: silent,
      env: {},
    });
    const publisher = await connectNats({ servers: natsUrl(), name: 'probe-publisher' });
    try {
      expect(service.transport?.describe().consumers).toEqual([
        { name: 'probe-sent', stream: 'PROBES', types: ['probe.sent'] },
      ]);
      const eventing = service.app.get<EventingRuntime>(EVENTING);
      const envelope = eventing.envelopes.message(ProbeSent, { probeId: 'p1' }, 'probe-p1', {
        correlationId: 'r',
        causationId: 'r',
      });
      await publisher.js.publish(ProbeSent.subject(undefined, prefix), JSON.stringify(envelope));
      await waitFor(
        async () => ((await eventing.client.ask(ProbesSeen, {})).probeIds.includes('p1') ? true : null),
        { description: 'probe applied', timeoutMs: 15_000 },
      );
      // Healthy while Postgres and NATS answer.
      expect((await fetch(`http://127.0.0.1:${service.metricsPort}/healthz`)).status).toBe(200);
    } finally {
      await publisher.close();
      await service.close();
    }
    expect(service.transport?.consuming).toBe(false);
  });

  it('refuses to start a module that provides no eventing, naming the way out', async () => {
    @Module({})
    class Bare {}
    await expect(
      runService({ name: 'probe', module: () => Bare, handleSignals: false, logger: silent, env: {} }),
    ).rejects.toThrow();
  });
});
