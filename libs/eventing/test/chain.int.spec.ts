import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Database } from '../src';
import type { SpanRecord } from './chain/spans';
import { auditSummary } from './fixtures/projection';
import { DATABASE_URL, deleteStreams, dropSchema, NATS_URL, uniqueName } from './support';

const ROOT = resolve(import.meta.dirname, '../../..');
const prefix = uniqueName('chain');
const producerSchema = uniqueName('chain_p');
const projectorSchema = uniqueName('chain_c');
const dir = mkdtempSync(join(tmpdir(), 'gpunet-chain-'));

const run = (script: string, env: Record<string, string>) => {
  const child = spawn(process.execPath, ['--import', 'tsx', resolve(import.meta.dirname, 'chain', script)], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL, NATS_URL, PREFIX: prefix, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exit = once(child, 'exit') as Promise<[number | null, string | null]>;
  return { child, exit };
};

afterAll(async () => {
  await deleteStreams(NATS_URL, prefix);
  await dropSchema(producerSchema);
  await dropSchema(projectorSchema);
  rmSync(dir, { recursive: true, force: true });
});

describe('the chain across processes', () => {
  it('command → event store → outbox → JetStream → another process’s projection, in one trace', async () => {
    const projector = run('projector.process.ts', {
      SCHEMA: projectorSchema,
      EXPECTED: '1',
      SPANS_FILE: join(dir, 'projector.json'),
    });
    await once(projector.child.stdout, 'data'); // "ready": its consumer exists before anything is published
    const producer = run('producer.process.ts', {
      SCHEMA: producerSchema,
      SPANS_FILE: join(dir, 'producer.json'),
    });
    expect((await producer.exit)[0]).toBe(0);
    expect((await projector.exit)[0]).toBe(0);

    const db = await new Database({ url: DATABASE_URL, schema: projectorSchema }).open();
    try {
      expect(await auditSummary(db)).toEqual({ events: 1, maxApplied: 1, streams: 1, violations: 0 });
    } finally {
      await db.close();
    }

    const producerSpans = JSON.parse(readFileSync(join(dir, 'producer.json'), 'utf8')) as SpanRecord[];
    const projectorSpans = JSON.parse(readFileSync(join(dir, 'projector.json'), 'utf8')) as SpanRecord[];
    const request = producerSpans.find((s) => s.name === 'POST /counters/chain')!;
    const publish = producerSpans.find((s) => s.name === 'publish counter.incremented')!;
    const processed = projectorSpans.find((s) => s.name === 'process counter.incremented')!;
    expect(request).toBeDefined();
    // The relay's publish continues the request's trace although it ran later, from the outbox row.
    expect(publish.traceId).toBe(request.traceId);
    // The other process's consumer span is a child of the publish span: one trace across the hop.
    expect(processed.traceId).toBe(request.traceId);
    expect(processed.parentSpanId).toBe(publish.spanId);
  });
});
