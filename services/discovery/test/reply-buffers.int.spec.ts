import { FindCandidates } from '@gpunet/contracts';
import { askQuery, type Database, serveQuery } from '@gpunet/eventing';
import { type NatsTestContext, seededRandom, useNats, waitFor } from '@gpunet/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CandidateCache } from '../src/app/candidates.service';
import { gpu, provider } from './support/index-rows';
import { gpuRequirement } from './support/requirement';

const AT = Date.parse('2030-01-01T12:00:00Z');
const random = seededRandom('reply-buffers');
const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
/** Edge ids (user nkeys' shape), sorted: the index's order. */
const ids = Array.from(
  { length: 300 },
  () => `U${Array.from({ length: 55 }, () => random.pick([...B32])).join('')}`,
).sort();

describe('candidate replies written into reused buffers (real NATS)', () => {
  let server: NatsTestContext;
  let client: NatsTestContext;
  let cache: CandidateCache;

  beforeAll(async () => {
    server = await useNats({ label: 'reply-buffers' });
    client = await useNats({ label: 'reply-buffers-client' });
    // Pages of ~40 providers, each provider's JSON different (names, models), so a reply that kept
    // bytes of another would not equal its own page.
    cache = new CandidateCache({
      db: {} as Pick<Database, 'query' | 'schema'>,
      nc: server.nc,
      maxReplyBytes: 100_000,
    });
    const h100 = { model: 'NVIDIA H100 80GB HBM3', modelWords: ' NVIDIA H100 80GB HBM3 ' };
    cache.index.replaceAll(
      Array.from({ length: 300 }, (_, i) =>
        provider(ids[i]!, {
          name: `provider ${i} ${'x'.repeat(i % 17)}`,
          gpus: Array.from({ length: 8 }, (_, k) => gpu(k, (i + k) % 3 === 0 ? h100 : {})),
        }),
      ),
    );
    serveQuery(FindCandidates, (request) => Promise.resolve(cache.queryEncoded(request, AT)), {
      nc: server.nc,
      prefix: server.prefix,
      validateResponses: false,
    });
    await server.nc.flush();
  });

  afterAll(async () => {
    await client?.cleanup();
    await server?.cleanup();
  });

  const requests = Array.from({ length: 60 }, (_, i) =>
    FindCandidates.request.parse({
      gpu: gpuRequirement(
        ['{ count: 1 }', "{ count: 1, models: ['H100'] }", "{ count: 2, models: ['A100'] }"][i % 3]!,
      ),
      cursor: i % 4 === 0 ? null : ids[(i * 37) % 300]!,
      limit: 1 + (i % 50),
    }),
  );
  const ask = (request: (typeof requests)[number]) =>
    askQuery(client.nc, FindCandidates, request, { prefix: server.prefix, timeoutMs: 10_000 });

  it('answers each query with its own page, one after another and many at once', async () => {
    for (const request of requests.slice(0, 20)) expect(await ask(request)).toEqual(cache.query(request, AT));
    // The buffers come back once NATS has sent the replies (the flush's PONG may trail the reply).
    await waitFor(() => cache.replyBuffers.idle > 0 || undefined, { description: 'a reply buffer back' });

    const answers = await Promise.all(requests.map(ask));
    answers.forEach((answer, i) => expect(answer).toEqual(cache.query(requests[i]!, AT)));
  });
});
