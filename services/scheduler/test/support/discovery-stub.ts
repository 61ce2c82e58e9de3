import { type CandidateProvider, type Envelope, FindCandidates, prefixSubject } from '@gpunet/contracts';
import { serveQuery } from '@gpunet/eventing';
import type { EventCollector, NatsTestContext } from '@gpunet/testing';
import type { Msg, Subscription } from '@nats-io/nats-core';
import { candidate } from './fixtures';

/**
 * Discovery's candidate query as the int tests answer it — every edge with GPUs offered and not
 * excluded (simulated ones only when the query includes them), without the GPUs `isHeld` names —
 * and every `scheduler.>` message into `events`.
 */
export const serveDiscoveryAndCollect = (
  nats: NatsTestContext,
  /** Edge id → GPUs it offers (0: none). */
  offered: () => Iterable<readonly [string, number]>,
  isHeld: (gpuUuid: string) => boolean,
  events: EventCollector<Envelope>,
  /** An edge's candidate before held GPUs are taken out; default `candidate`. */
  candidateOf: (id: string, gpus: number) => CandidateProvider = candidate,
): Subscription[] => [
  serveQuery(
    FindCandidates,
    (request) => {
      const items: CandidateProvider[] = [...offered()]
        .filter(([id, n]) => n > 0 && !request.excludeProviders.includes(id))
        .map(([id, n]) => candidateOf(id, n))
        .filter((c) => request.includeSimulated || !c.simulated)
        .map((c) => ({ ...c, gpus: c.gpus.filter((g) => !isHeld(g.uuid)) }))
        .filter((c) => c.gpus.length > 0);
      return Promise.resolve({ items, nextCursor: null });
    },
    { nc: nats.nc, prefix: nats.prefix },
  ),
  nats.nc.subscribe(prefixSubject(nats.prefix, 'scheduler.>'), {
    callback: (_e: unknown, msg: Msg) => events.push(msg.json<Envelope>()),
  }),
];
