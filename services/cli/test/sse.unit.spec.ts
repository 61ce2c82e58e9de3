import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GatewayClient } from '../src/app/api/client';
import { readEventStream, type SseEvent, SseParser } from '../src/app/api/sse';
import { fakeIo } from './fake-io';

const parseAll = (chunks: string[]): SseEvent[] => {
  const p = new SseParser();
  return chunks.flatMap((c) => p.feed(c));
};

describe('SseParser', () => {
  it('parses event, data, id; joins data lines; skips comments', () => {
    expect(
      parseAll([
        ': stream open\n\nid: 1\nevent: job.funded\ndata: {"a":1}\n\n: keep-alive\n\ndata: x\ndata: y\n\n',
      ]),
    ).toEqual([
      { event: 'job.funded', data: '{"a":1}', id: '1' },
      // The last id persists to later events; no event name means `message`.
      { event: 'message', data: 'x\ny', id: '1' },
    ]);
  });

  it('handles CRLF, CR and LF line ends, also when a CRLF is split across chunks', () => {
    expect(parseAll(['data: a\r', '\n\r', '\ndata: b\r\rdata: c\n\n'])).toEqual([
      { event: 'message', data: 'a', id: undefined },
      { event: 'message', data: 'b', id: undefined },
      { event: 'message', data: 'c', id: undefined },
    ]);
  });

  it('follows the spec on the edges: BOM, no space after the colon, field without colon, NUL ids, retry', () => {
    const p = new SseParser();
    expect(p.feed('\ufeffdata:no-space\n\n')).toEqual([
      { event: 'message', data: 'no-space', id: undefined },
    ]);
    // A field without a colon is the whole line with an empty value: `data` adds an empty line.
    expect(p.feed('data\ndata\n\n')).toEqual([{ event: 'message', data: '\n', id: undefined }]);
    expect(p.feed('id: 7\nid: bad\u0000id\ndata: z\n\n')).toEqual([{ event: 'message', data: 'z', id: '7' }]);
    p.feed('retry: 1500\nretry: soon\n\n');
    expect(p.retryMs).toBe(1500);
    // An event with no data is not dispatched, and its name does not leak into the next one.
    expect(p.feed('event: end\n\ndata: later\n\n')).toEqual([{ event: 'message', data: 'later', id: '7' }]);
    expect(p.lastEventId).toBe('7');
  });

  it('keeps an unfinished event until its blank line arrives', () => {
    const p = new SseParser();
    expect(p.feed('event: log\ndata: {"ra')).toEqual([]);
    expect(p.feed('nk":0}\n')).toEqual([]);
    expect(p.feed('\n')).toEqual([{ event: 'log', data: '{"rank":0}', id: undefined }]);
  });

  it('fuzz: any chunking of a stream gives the events of the whole stream', () => {
    const field = fc.string({ maxLength: 20 }).map((s) => s.replace(/[\r\n]/g, ' '));
    const event = fc.record({
      id: fc.option(fc.stringMatching(/^[0-9]{1,5}$/), { nil: undefined }),
      event: fc.option(fc.stringMatching(/^[a-z.]{1,12}$/), { nil: undefined }),
      data: fc.array(field, { minLength: 1, maxLength: 3 }),
      comment: fc.boolean(),
      eol: fc.constantFrom('\n', '\r\n', '\r'),
    });
    fc.assert(
      fc.property(
        fc.array(event, { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (events, cuts) => {
          const text = events
            .map(
              (e) =>
                (e.comment ? `: ping${e.eol}` : '') +
                (e.id !== undefined ? `id: ${e.id}${e.eol}` : '') +
                (e.event !== undefined ? `event: ${e.event}${e.eol}` : '') +
                e.data.map((d) => `data: ${d}${e.eol}`).join('') +
                e.eol,
            )
            .join('');
          const whole = parseAll([text]);
          const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
          const chunks: string[] = [];
          let last = 0;
          for (const p of points) {
            chunks.push(text.slice(last, p));
            last = p;
          }
          chunks.push(text.slice(last));
          expect(parseAll(chunks)).toEqual(whole);
          expect(whole).toHaveLength(events.length);
          let id: string | undefined;
          whole.forEach((w, i) => {
            const e = events[i]!;
            id = e.id ?? id;
            expect(w).toEqual({ event: e.event || 'message', data: e.data.join('\n'), id });
          });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('fuzz: never throws on arbitrary input', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 50 }), { maxLength: 10 }), (chunks) => {
        parseAll(chunks);
      }),
    );
  });
});

/** A response body that delivers `text`, then ends (or, `close` false, fails like a reset connection). */
const body = (text: string, close = true): ReadableStream<Uint8Array> => {
  let sent = false;
  return new ReadableStream({
    pull(c) {
      if (!sent) {
        sent = true;
        c.enqueue(new TextEncoder().encode(text));
      } else if (close) c.close();
      else c.error(new Error('connection reset'));
    },
  });
};

describe('readEventStream', () => {
  const target = { gateway: 'http://gw.test', apiKey: `gpn_AAAAAAAAAAAA_${'s'.repeat(43)}` };

  it('reconnects with Last-Event-ID after a drop and stops at the terminal event', async () => {
    const seen: (string | null)[] = [];
    const responses = [
      'id: 1\nevent: job.funded\ndata: {}\n\nid: 2\nevent: job.queued\ndata: {}\n\n',
      'id: 3\nevent: job.placed\ndata: {}\n\nevent: end\ndata: {"status":"completed"}\n\nevent: never\ndata: {}\n\n',
    ];
    const f = fakeIo(
      {},
      {
        fetch: (_url, init) => {
          seen.push(new Headers(init?.headers).get('last-event-id'));
          const text = responses.shift()!;
          return Promise.resolve(new Response(body(text, responses.length === 0), { status: 200 }));
        },
      },
    );
    const client = new GatewayClient(target, f.io);
    const events: string[] = [];
    for await (const e of readEventStream(
      client,
      f.io,
      '/v1/jobs/j/events',
      {},
      { isTerminal: (x) => x.event === 'end' },
    ))
      events.push(e.event);
    expect(events).toEqual(['job.funded', 'job.queued', 'job.placed', 'end']);
    expect(seen).toEqual([null, '2']);
    expect(f.sleeps).toEqual([500]);
  });

  it('gives up after the retries with exit 5; an error response is not retried', async () => {
    const f = fakeIo();
    const client = new GatewayClient(target, f.io);
    const run = async () => {
      for await (const e of readEventStream(client, f.io, '/x', {}, { maxRetries: 3 })) void e;
    };
    await expect(run()).rejects.toMatchObject({
      exitCode: 5,
      message: expect.stringMatching(/dropped 4 times/),
    });
    expect(f.sleeps).toEqual([500, 1000, 2000]);

    const g = fakeIo(
      {},
      {
        fetch: () =>
          Promise.resolve(
            new Response(
              JSON.stringify({ status: 404, code: 'NOT_FOUND', title: 'Not found', detail: 'no job j' }),
              {
                status: 404,
                headers: { 'content-type': 'application/problem+json' },
              },
            ),
          ),
      },
    );
    const gone = async () => {
      for await (const e of readEventStream(new GatewayClient(target, g.io), g.io, '/x', {})) void e;
    };
    await expect(gone()).rejects.toMatchObject({ exitCode: 4 });
    expect(g.sleeps).toEqual([]);
  });
});
