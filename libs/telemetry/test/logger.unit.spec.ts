import { createUser } from '@nats-io/nkeys';
import { describe, expect, it } from 'vitest';
import { createLogger, REDACTED, redact, withSpan } from '../src';
import { spanNamed, useTestTelemetry } from './helpers';

const { telemetry, spans } = useTestTelemetry('logger-test');

/** A pino destination that keeps every line in memory; pino writes to it synchronously. */
function memoryDestination() {
  const lines: string[] = [];
  return {
    stream: { write: (line: string) => void lines.push(line) },
    raw: () => lines.join(''),
    records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

const SECRET = 's3cr3t-V4lue';

describe('createLogger', () => {
  it('writes one JSON object per line with level label, ISO time, service and message', () => {
    const out = memoryDestination();
    const log = createLogger({ service: 'logger-test', version: '1.0.0', destination: out.stream });
    log.info({ jobId: 'job-1' }, 'job placed');
    const [line] = out.records();
    expect(line).toMatchObject({
      level: 'info',
      service: 'logger-test',
      version: '1.0.0',
      jobId: 'job-1',
      msg: 'job placed',
    });
    expect(line?.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(line).not.toHaveProperty('trace_id');
  });

  it('adds the active span’s trace_id and span_id', async () => {
    const out = memoryDestination();
    const log = createLogger({ service: 'logger-test', destination: out.stream });
    await withSpan(telemetry().tracer, 'handle', {}, async () => {
      await Promise.resolve();
      log.info('inside');
    });
    const span = spanNamed(spans(), 'handle');
    expect(out.records()[0]).toMatchObject({
      trace_id: span.spanContext().traceId,
      span_id: span.spanContext().spanId,
      trace_flags: '01',
    });
  });

  it('honours the level', () => {
    const out = memoryDestination();
    const log = createLogger({ service: 'logger-test', level: 'warn', destination: out.stream });
    log.info('dropped');
    log.warn('kept');
    expect(out.records().map((r) => r.msg)).toEqual(['kept']);
  });

  describe('never lets a secret reach the output', () => {
    const seed = new TextDecoder().decode(createUser().getSeed());
    const cases: [string, (log: ReturnType<typeof createLogger>) => void][] = [
      ['password field', (log) => log.info({ password: SECRET }, 'login')],
      ['nested secret', (log) => log.info({ config: { nats: { secret: SECRET } } }, 'config')],
      ['token', (log) => log.info({ natsToken: SECRET, refresh_token: SECRET }, 'tokens')],
      [
        'apiKey / api_key / x-api-key',
        (log) => log.info({ apiKey: SECRET, api_key: SECRET, 'x-api-key': SECRET }),
      ],
      [
        'authorization header',
        (log) => log.info({ headers: { Authorization: `Bearer ${SECRET}` } }, 'request'),
      ],
      ['privateKey at any depth', (log) => log.info({ edge: { identity: { privateKey: SECRET } } })],
      ['seed', (log) => log.info({ seed: SECRET, nkeySeed: SECRET })],
      ['secrets inside arrays', (log) => log.info({ edges: [{ id: 'e1', password: SECRET }] })],
      [
        'DATABASE_URL credentials',
        (log) => log.info({ DATABASE_URL: `postgres://gpunet:${SECRET}@db:5432/gpunet` }),
      ],
      ['URL credentials under any key', (log) => log.info({ target: `nats://edge:${SECRET}@nats:4222` })],
      [
        'URL credentials in the message',
        (log) => log.info(`connecting to postgres://gpunet:${SECRET}@db/gpunet`),
      ],
      [
        'URL credentials in interpolation',
        (log) => log.info('connecting to %s', `postgres://u:${SECRET}@db/x`),
      ],
      [
        'libpq password= pair',
        (log) => log.info({ conninfo: `host=db user=gpunet password=${SECRET} dbname=x` }),
      ],
      ['bearer token in free text', (log) => log.warn(`rejected header Bearer ${SECRET}`)],
      ['an nkey seed under an innocent key', (log) => log.info({ note: `seed is ${seed}` })],
      [
        'child logger bindings',
        (log) => log.child({ token: SECRET, url: `redis://:${SECRET}@cache` }).info('child'),
      ],
      [
        'grandchild bindings',
        (log) => log.child({ edgeId: 'e1' }).child({ password: SECRET }).info('grandchild'),
      ],
      [
        'setBindings',
        (log) => {
          const child = log.child({ edgeId: 'e1' });
          child.setBindings({ apiKey: SECRET });
          child.info('rebound');
        },
      ],
      [
        'an error message',
        (log) => log.error(new Error(`cannot connect to postgres://gpunet:${SECRET}@db/x`)),
      ],
      [
        'an error with a message argument and a secret field',
        (log) => log.error(Object.assign(new Error('boom'), { password: SECRET }), 'failed'),
      ],
      [
        'an error under err',
        (log) => log.error({ err: new Error(`dsn postgres://a:${SECRET}@h/d`) }, 'failed'),
      ],
    ];

    it.each(cases)('%s', (_name, write) => {
      const out = memoryDestination();
      write(createLogger({ service: 'logger-test', level: 'trace', destination: out.stream }));
      expect(out.raw()).not.toBe('');
      expect(out.raw()).not.toContain(SECRET);
      expect(out.raw()).not.toContain(seed);
      expect(out.raw()).toContain(REDACTED);
    });
  });

  it('keeps what is not secret: URL users and hosts, error messages and stacks, ordinary fields', () => {
    const out = memoryDestination();
    const log = createLogger({ service: 'logger-test', destination: out.stream });
    log.error(new Error(`cannot connect to postgres://gpunet:${SECRET}@db:5432/gpunet`));
    log.info({ DATABASE_URL: 'postgres://db:5432/gpunet', gpus: 8 }, 'started');
    const [failure, started] = out.records();
    expect(failure?.msg).toBe(`cannot connect to postgres://gpunet:${REDACTED}@db:5432/gpunet`);
    expect((failure?.err as { type: string; stack: string }).type).toBe('Error');
    expect((failure?.err as { stack: string }).stack).toContain(
      `postgres://gpunet:${REDACTED}@db:5432/gpunet`,
    );
    expect(started).toMatchObject({ DATABASE_URL: 'postgres://db:5432/gpunet', gpus: 8, msg: 'started' });
  });
});

describe('redact', () => {
  it('does not modify its input and handles cycles', () => {
    const input: Record<string, unknown> = { password: SECRET, nested: { ok: 1 } };
    input.self = input;
    const out = redact(input) as Record<string, unknown>;
    expect(input.password).toBe(SECRET);
    expect(out).toEqual({ password: REDACTED, nested: { ok: 1 }, self: '[Circular]' });
  });

  it('keeps shared, non-circular references', () => {
    const shared = { gpu: 'H100' };
    expect(redact({ a: shared, b: shared })).toEqual({ a: shared, b: shared });
  });

  it('leaves null and undefined secret fields visible as such (absence is not a secret)', () => {
    expect(redact({ password: null, token: undefined })).toEqual({ password: null, token: undefined });
  });
});
