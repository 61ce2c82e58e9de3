import {
  AccountStatementQuery,
  FindCandidates,
  FindGpuVerification,
  GetPlacementExplanation,
  GetProvider,
  GetProviderTrust,
  JobStatementQuery,
  SettlementBalancesQuery,
  SimulatedChainDepositRequest,
  SubnetEconomicsQuery,
} from '@gpunet/contracts';
import { serveQuery } from '@gpunet/eventing';
import type { Subscription } from '@nats-io/nats-core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  INVALID_SPEC_YAML,
  SLASH_ID,
  subnetEconomicsFixture,
  unknownSubnetFixture,
  VALID_SPEC_JSON,
  VALID_SPEC_YAML,
} from './support/fixtures';
import { type GatewayHarness, startHarness } from './support/harness';
import { invalidValue, validValue } from './support/openapi-arbitraries';

type Schema = Record<string, unknown>;

interface Operation {
  readonly method: string;
  readonly path: string;
  readonly operationId: string;
  readonly parameters: readonly { name: string; in: string; required: boolean; schema: Schema }[];
  readonly body: { readonly contentTypes: readonly string[]; readonly schema: Schema } | null;
  readonly sse: boolean;
}

interface FuzzRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string | undefined;
  readonly sse: boolean;
  readonly label: string;
}

const REQUESTS = 5_000;
const CONCURRENCY = 24;

/** Every operation of the document, with its parameters and body. */
const operationsOf = (doc: Schema): Operation[] =>
  Object.entries(doc['paths'] as Record<string, Record<string, Schema>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => {
      const content = (op['requestBody'] as { content?: Record<string, { schema: Schema }> } | undefined)
        ?.content;
      const responses = JSON.stringify(op['responses']);
      return {
        method: method.toUpperCase(),
        path,
        operationId: op['operationId'] as string,
        parameters: (op['parameters'] as Operation['parameters'] | undefined) ?? [],
        body: content
          ? { contentTypes: Object.keys(content), schema: Object.values(content)[0]!.schema }
          : null,
        sse: responses.includes('text/event-stream'),
      };
    }),
  );

/** Header values fetch accepts: visible ASCII and spaces. */
const headerText = fc.stringMatching(/^[\x21-\x7e][\x20-\x7e]{0,40}$/);

describe('gateway fuzzing from its OpenAPI document (NATS + Postgres)', () => {
  let h: GatewayHarness;
  let doc: Schema;
  const subscriptions: Subscription[] = [];
  const keys: Record<string, string> = {};
  const jobIds: string[] = [];

  beforeAll(async () => {
    // The query answerers share a loaded CI machine with 24 concurrent requests: a generous timeout,
    // so that a slow answer is not mistaken for an unavailable service (503).
    h = await startHarness('gateway_fuzz', {
      rateLimitPerSecond: 100_000,
      rateLimitBurst: 100_000,
      queryTimeoutMs: 20_000,
    });
    keys['alice'] = await h.keyFor('fz-alice', ['read', 'submit'], 'ai');
    keys['bob'] = await h.keyFor('fz-bob');
    keys['reader'] = await h.keyFor('fz-alice', ['read']);
    keys['admin'] = h.adminKey;
    // Settlement's, discovery's and benchmarking's queries, answered as those services would for a
    // network with no jobs and one unchallenged edge.
    const options = { nc: h.nats.nc, prefix: h.nats.prefix };
    subscriptions.push(
      serveQuery(SettlementBalancesQuery, () => Promise.resolve({ accounts: [] }), options),
      serveQuery(
        SimulatedChainDepositRequest,
        ({ amount }) => Promise.resolve({ chainTxId: 'sim-fuzz', available: amount }),
        options,
      ),
      serveQuery(
        AccountStatementQuery,
        () => Promise.resolve({ account: null, entries: [], nextAfterSequence: null }),
        options,
      ),
      serveQuery(
        JobStatementQuery,
        ({ jobId }) =>
          Promise.resolve({
            jobId,
            status: 'unknown' as const,
            tenantId: null,
            subnetId: null,
            asset: null,
            funded: '0',
            paidToProviders: '0',
            subnetFees: '0',
            platformFees: '0',
            refunded: '0',
            pending: '0',
            escrowBalance: '0',
            legs: [],
          }),
        options,
      ),
      // One subnet settlement knows (its proposals, delegations and slashes), every other unknown.
      serveQuery(
        SubnetEconomicsQuery,
        ({ subnetId }) =>
          Promise.resolve(
            subnetId === 'gov' ? subnetEconomicsFixture(subnetId) : unknownSubnetFixture(subnetId),
          ),
        options,
      ),
      // One edge discovery lists, unknown to benchmarking: the listing asks for its verification.
      serveQuery(
        FindCandidates,
        () =>
          Promise.resolve({
            items: [
              {
                providerId: 'U'.padEnd(56, 'F'),
                name: 'fuzz-edge',
                simulated: false,
                isolation: 'container' as const,
                cpuArchitecture: 'amd64',
                cpuMillicores: 8_000,
                memoryBytes: 2 ** 34,
                location: { continent: 'EU', country: 'DE', city: null },
                subnets: ['public'],
                maxGpusPerJob: 1,
                maxJobDurationMs: null,
                asset: 'USDC',
                gpus: [
                  {
                    uuid: 'GPU-fuzz-0',
                    index: 0,
                    vendor: 'nvidia' as const,
                    model: 'NVIDIA H100 80GB HBM3',
                    vramBytes: 80 * 2 ** 30,
                    computeCapability: { major: 9, minor: 0 },
                    cudaVersion: '12.4',
                    rocmVersion: null,
                    architecture: null,
                    pciBusId: null,
                    priceFloorMinor: null,
                    directPeers: [],
                  },
                ],
              },
            ],
            nextCursor: null,
          }),
        options,
      ),
      // No provider registered yet: every provider view is a 404.
      serveQuery(GetProvider, () => Promise.resolve({ provider: null }), options),
      serveQuery(GetProviderTrust, () => Promise.resolve({ trust: null }), options),
      serveQuery(FindGpuVerification, () => Promise.resolve({ items: [] }), options),
      // The scheduler has tried no job yet: every explanation is a 404.
      serveQuery(GetPlacementExplanation, () => Promise.resolve({ explanation: null }), options),
    );
    for (const key of [keys['alice'], keys['alice'], keys['bob']]) {
      const res = await fetch(`${h.url}/v1/jobs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/yaml' },
        body: VALID_SPEC_YAML,
      });
      jobIds.push(((await res.json()) as { jobId: string }).jobId);
    }
    doc = (await (await fetch(`${h.url}/docs/openapi.json`)).json()) as Schema;
  });

  afterAll(async () => {
    for (const s of subscriptions) s.unsubscribe();
    await h?.close();
  });

  const requestFor = (op: Operation): fc.Arbitrary<FuzzRequest> => {
    // Known ids as well as generated ones, so that the routes past the lookup are reached too.
    const known: Record<string, readonly string[]> = {
      jobId: jobIds,
      subnetId: ['gov'],
      proposalId: ['p-fee', 'p-old'],
      slashId: [SLASH_ID],
    };
    const param = (p: Operation['parameters'][number]) =>
      known[p.name] !== undefined
        ? fc.oneof(fc.constantFrom(...known[p.name]!), validValue(p.schema, doc), invalidValue(p.schema, doc))
        : fc.oneof({ weight: 3, arbitrary: validValue(p.schema, doc) }, invalidValue(p.schema, doc));
    const pathParams = op.parameters.filter((p) => p.in === 'path');
    const queryParams = op.parameters.filter((p) => p.in === 'query');
    const specBody = fc.oneof(
      fc.constantFrom(VALID_SPEC_YAML, VALID_SPEC_JSON, INVALID_SPEC_YAML),
      // The valid spec with a random splice: broken YAML, wrong values, half documents.
      fc
        .tuple(fc.nat({ max: VALID_SPEC_YAML.length }), fc.nat({ max: 40 }), fc.string({ maxLength: 12 }))
        .map(([at, cut, insert]) => VALID_SPEC_YAML.slice(0, at) + insert + VALID_SPEC_YAML.slice(at + cut)),
      fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
      fc.string({ maxLength: 200 }),
    );
    const body: fc.Arbitrary<string | undefined> = !op.body
      ? fc.constant(undefined)
      : op.body.schema['$ref'] === '#/components/schemas/EnsembleSpec'
        ? specBody
        : fc.oneof(
            { weight: 3, arbitrary: validValue(op.body.schema, doc).map((v) => JSON.stringify(v)) },
            { weight: 2, arbitrary: invalidValue(op.body.schema, doc).map((v) => JSON.stringify(v) ?? '') },
            { weight: 1, arbitrary: fc.string({ maxLength: 60 }) },
            { weight: 1, arbitrary: fc.constant(undefined) },
          );
    const contentType = op.body
      ? fc.oneof(
          { weight: 6, arbitrary: fc.constantFrom(...op.body.contentTypes) },
          {
            weight: 1,
            arbitrary: fc.constantFrom('text/plain', 'application/xml', 'multipart/form-data', ''),
          },
        )
      : fc.constantFrom('', 'application/json');
    const auth = fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom('alice', 'bob', 'reader', 'admin') },
      { weight: 1, arbitrary: fc.constantFrom('none', 'garbage', 'revoked-looking') },
    );
    return fc
      .record({
        path: fc.tuple(...pathParams.map(param)),
        query: fc.tuple(...queryParams.map((p) => fc.option(param(p), { nil: undefined, freq: 3 }))),
        body,
        contentType,
        auth,
        idempotencyKey: fc.option(headerText, { nil: undefined, freq: 3 }),
        lastEventId: fc.option(headerText, { nil: undefined, freq: 5 }),
      })
      .map((r) => {
        let url = op.path;
        pathParams.forEach((p, i) => {
          url = url.replace(`{${p.name}}`, encodeURIComponent(String(r.path[i])));
        });
        const search = new URLSearchParams();
        queryParams.forEach((p, i) => {
          const v = r.query[i];
          if (v !== undefined) search.set(p.name, typeof v === 'string' ? v : JSON.stringify(v));
        });
        const qs = search.toString();
        const headers: Record<string, string> = {};
        if (r.auth === 'garbage') headers['authorization'] = 'Bearer not-a-key';
        else if (r.auth === 'revoked-looking')
          headers['authorization'] = `Bearer gpn_AAAAAAAAAAAA_${'A'.repeat(43)}`;
        else if (r.auth !== 'none') headers['authorization'] = `Bearer ${keys[r.auth]}`;
        if (r.body !== undefined && r.contentType !== '') headers['content-type'] = r.contentType;
        if (r.idempotencyKey !== undefined) headers['idempotency-key'] = r.idempotencyKey;
        if (r.lastEventId !== undefined) headers['last-event-id'] = r.lastEventId;
        return {
          method: op.method,
          url: `${url}${qs === '' ? '' : `?${qs}`}`,
          headers,
          body: op.method === 'GET' || op.method === 'DELETE' ? undefined : r.body,
          sse: op.sse,
          label: op.operationId,
        };
      });
  };

  it(`answers ${REQUESTS} generated requests (valid and invalid) without a 5xx, and stays up`, async () => {
    const operations = operationsOf(doc);
    expect(operations.length).toBeGreaterThanOrEqual(20);
    const requests = fc.sample(fc.oneof(...operations.map(requestFor)), {
      numRuns: REQUESTS,
      seed: 20_261_129,
    });
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    let next = 0;
    const worker = async () => {
      while (next < requests.length) {
        const r = requests[next++]!;
        const controller = new AbortController();
        let status = 0;
        let type = '';
        try {
          const res = await fetch(`${h.url}${r.url}`, {
            method: r.method,
            headers: r.headers,
            ...(r.body !== undefined ? { body: r.body } : {}),
            signal: controller.signal,
          });
          status = res.status;
          type = res.headers.get('content-type') ?? '';
          // An event stream of a running job never ends on its own: the status is what is checked.
          if (r.sse && status === 200) controller.abort();
          else await res.arrayBuffer();
        } catch (error) {
          if (!controller.signal.aborted)
            failures.push(`${r.method} ${r.url} (${r.label}): ${String(error)}`);
        }
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status >= 500 || status === 0)
          failures.push(`${r.method} ${r.url} (${r.label}) → ${status} ${JSON.stringify(r.headers)}`);
        if (status >= 400 && !type.includes('application/problem+json'))
          failures.push(`${r.method} ${r.url} (${r.label}) → ${status} without problem+json (${type})`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    expect(failures.slice(0, 20)).toEqual([]);
    expect([...statuses.values()].reduce((a, b) => a + b, 0)).toBe(REQUESTS);
    // Both sides were exercised: successes and client errors.
    expect([...statuses.keys()].some((s) => s >= 200 && s < 300)).toBe(true);
    expect([...statuses.keys()].some((s) => s >= 400 && s < 500)).toBe(true);
    expect((await fetch(`${h.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${h.url}/readyz`)).status).toBe(200);
  }, 180_000);
});
