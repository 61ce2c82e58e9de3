import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatAmount, table } from '../src/app/api/format';
import { renderProblem, toProblem } from '../src/app/api/problem';
import { runCli } from '../src/app/cli';
import { verifiedSummary } from '../src/app/commands/market/providers.group';
import { fakeIo } from './fake-io';
import { explanationFixture, jobFixture, proposalFixture, SLASH_ID, subnetFixture } from './fixtures';

const KEY = `gpn_AAAAAAAAAAAA_${'S3cr3t'.repeat(7)}x`;
const SECRET = KEY.split('_')[2]!;

type Route = (method: string, url: URL, init: RequestInit | undefined) => Response | undefined;

/** A fake gateway: the first route that answers; 404 problem otherwise. Records every request. */
const gatewayFetch = (...routes: Route[]) => {
  const requests: { method: string; url: URL; headers: Headers; body: string | undefined }[] = [];
  const fetch: typeof globalThis.fetch = (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const method = init?.method ?? 'GET';
    requests.push({
      method,
      url,
      headers: new Headers(init?.headers),
      body: init?.body as string | undefined,
    });
    for (const r of routes) {
      const res = r(method, url, init);
      if (res) return Promise.resolve(res);
    }
    return Promise.resolve(
      problem(404, { code: 'NOT_FOUND', title: 'Not found', detail: `no ${url.pathname}` }),
    );
  };
  return { fetch, requests };
};

const problem = (status: number, body: Record<string, unknown>) =>
  new Response(JSON.stringify({ status, type: 'https://gpunet.io/problems/x', instance: '/v1/x', ...body }), {
    status,
    headers: { 'content-type': 'application/problem+json' },
  });

const LOGGED_IN = { GPUNET_GATEWAY: 'http://gw.test', GPUNET_API_KEY: KEY };

const run = async (
  argv: string[],
  opts: {
    env?: Record<string, string>;
    fetch?: typeof globalThis.fetch;
    files?: Record<string, string>;
  } = {},
) => {
  const f = fakeIo(opts.files ?? {}, {
    env: opts.env ?? LOGGED_IN,
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
  const code = await runCli(argv, f.io);
  return { code, stdout: f.stdout(), stderr: f.stderr(), files: f.files, privateFiles: f.privateFiles };
};

describe('problem details', () => {
  it('renders the fields at fault with file:line:column', () => {
    const p = toProblem(
      400,
      JSON.stringify({
        status: 400,
        title: 'The spec is invalid',
        detail: '2 errors in the spec',
        code: 'INVALID_SPEC',
        errors: [
          {
            path: 'budget.max_price_per_gpu_hour',
            message: 'expected a decimal string',
            code: 'INVALID_TYPE',
            line: 9,
            column: 27,
          },
          {
            path: 'allocations.trainer.resources.gpuz',
            message: "unknown field 'gpuz'",
            code: 'UNKNOWN_FIELD',
          },
          'junk',
        ],
      }),
    );
    expect(renderProblem(p, 'job.yaml')).toBe(
      [
        'gpunet: The spec is invalid (HTTP 400 INVALID_SPEC)',
        '  job.yaml:9:27: budget.max_price_per_gpu_hour: expected a decimal string [INVALID_TYPE]',
        "  allocations.trainer.resources.gpuz: unknown field 'gpuz' [UNKNOWN_FIELD]",
        '',
      ].join('\n'),
    );
  });

  it('copes with bodies that are not problems; hints what to do on 401', () => {
    expect(toProblem(502, '<html><body>Bad   gateway</body></html>')).toEqual({
      status: 502,
      detail: '<html><body>Bad gateway</body></html>',
    });
    expect(
      renderProblem(
        toProblem(
          401,
          JSON.stringify({ title: 'Unauthorized', detail: 'invalid API key', code: 'UNAUTHORIZED' }),
        ),
      ),
    ).toContain('hint: the API key is missing, wrong or revoked');
  });

  it('fuzz: any body gives a problem that renders', () => {
    fc.assert(
      fc.property(fc.integer({ min: 400, max: 599 }), fc.oneof(fc.string(), fc.json()), (status, body) => {
        const p = toProblem(status, body);
        expect(typeof renderProblem(p, 'f.yaml')).toBe('string');
      }),
      { numRuns: 500 },
    );
  });

  it('formats minor units', () => {
    expect(formatAmount('2500000', 6)).toBe('2.5');
    expect(formatAmount('5', 6)).toBe('0.000005');
    expect(formatAmount('-120', 2)).toBe('-1.2');
    expect(formatAmount('7', undefined)).toBe('7 (minor units)');
  });
});

describe('gpunet login / logout / config', () => {
  it('verifies the key, saves it privately, never prints it', async () => {
    const g = gatewayFetch((m, u) =>
      u.pathname === '/v1/jobs' ? Response.json({ items: [], nextCursor: null }) : undefined,
    );
    const r = await run(['login', '--gateway', 'http://gw.test/', '--key', KEY], { env: {}, fetch: g.fetch });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      'logged in to http://gw.test with key AAAAAAAAAAAA; saved to /home/test/.config/gpunet/config.json\n',
    );
    expect(r.stdout + r.stderr).not.toContain(SECRET);
    expect(r.privateFiles.has('/home/test/.config/gpunet/config.json')).toBe(true);
    expect(JSON.parse(r.files['/home/test/.config/gpunet/config.json']!)).toEqual({
      gateway: 'http://gw.test',
      apiKey: KEY,
    });
    expect(g.requests[0]!.headers.get('authorization')).toBe(`Bearer ${KEY}`);
  });

  it('refuses a malformed key without echoing it (2), a rejected key (3), an unreachable gateway (5)', async () => {
    const bad = await run(['login', '--gateway', 'http://gw.test', '--key', 'hunter2-secret'], { env: {} });
    expect(bad.code).toBe(2);
    expect(bad.stderr).not.toContain('hunter2');
    const refused = gatewayFetch(() =>
      problem(401, { code: 'UNAUTHORIZED', title: 'Unauthorized', detail: 'invalid API key' }),
    );
    const r3 = await run(['login', '--gateway', 'http://gw.test', '--key', KEY], {
      env: {},
      fetch: refused.fetch,
    });
    expect(r3.code).toBe(3);
    expect(Object.keys(r3.files)).toEqual([]);
    const r5 = await run(['login', '--gateway', 'http://gw.test', '--key', KEY], { env: {} });
    expect(r5.code).toBe(5);
    expect(r5.stderr).toContain('cannot reach the gateway at http://gw.test: connect ECONNREFUSED');
    expect((await run(['login', '--key', KEY], { env: {} })).code).toBe(2);
    expect((await run(['login', '--gateway', 'ftp://x', '--key', KEY], { env: {} })).code).toBe(2);
  });

  it('GPUNET_* override the file; without either, exit 3 saying what to do; GPUNET_CONFIG moves the file', async () => {
    const g = gatewayFetch((m, u) => Response.json({ items: [], nextCursor: null, at: u.host }));
    const files = { '/cfg.json': JSON.stringify({ gateway: 'http://file.test', apiKey: KEY }) };
    await run(['job', 'ls'], { env: { GPUNET_CONFIG: '/cfg.json' }, fetch: g.fetch, files });
    await run(['job', 'ls'], {
      env: { GPUNET_CONFIG: '/cfg.json', GPUNET_GATEWAY: 'http://env.test' },
      fetch: g.fetch,
      files,
    });
    expect(g.requests.map((r) => r.url.host)).toEqual(['file.test', 'env.test']);
    const none = await run(['job', 'ls'], { env: {} });
    expect(none.code).toBe(3);
    expect(none.stderr).toContain('not logged in: run `gpunet login --gateway URL --key KEY`');
    const broken = await run(['job', 'ls'], {
      env: { GPUNET_CONFIG: '/c.json' },
      files: { '/c.json': '{"gateway":"http://x","apiKey":"nope"}' },
    });
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain('/c.json: apiKey is not a gpunet API key');
    expect(broken.stderr).not.toContain('nope');
  });

  it('logout removes the file', async () => {
    const files = { '/home/test/.config/gpunet/config.json': '{}' };
    expect((await run(['logout'], { env: {}, files })).stdout).toBe(
      'removed /home/test/.config/gpunet/config.json\n',
    );
    expect((await run(['logout'], { env: {}, files })).stdout).toContain('not logged in');
  });
});

describe('gpunet job / providers / subnet / account (fake gateway)', () => {
  it('rejects bad command lines with exit 2 before any request', async () => {
    const g = gatewayFetch();
    for (const argv of [
      ['job', 'ls', '--status', 'runing'],
      ['job', 'ls', '--limit', '0'],
      ['job', 'get', 'bad id!'],
      ['job', 'get'],
      ['job', 'logs', 'j1', '--follow', '--rank', '1'],
      ['job', 'submit', 'a.yaml', '--idempotency-key', 'has space'],
      ['providers', 'ls', '--min-vram', 'lots'],
      ['subnet', 'join', 'ai', '--stake', '1.5'],
      ['account', 'statement', 'not-an-account'],
      ['account', 'withdraw', '--asset', 'NTX', '--amount', '5'],
    ]) {
      const r = await run(argv, { fetch: g.fetch });
      expect(r.code, argv.join(' ')).toBe(2);
    }
    expect(g.requests).toEqual([]);
  });

  it('job submit validates locally first: errors with line:column, nothing sent', async () => {
    const g = gatewayFetch();
    const r = await run(['job', 'submit', 'bad.yaml'], {
      fetch: g.fetch,
      files: {
        'bad.yaml':
          'apiVersion: gpunet.io/v1\nkind: Ensemble\nmetadata: {name: x}\nmax_duration: 2h\nallocations: {}\n',
      },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/bad\.yaml:5:\d+: allocations/);
    expect(g.requests).toEqual([]);
  });

  it("job submit POSTs the file as YAML with an Idempotency-Key; the gateway's problem names the field", async () => {
    const spec = new URL('../../../docs/examples/15-multi-provider-ddp.yaml', import.meta.url).pathname;
    const g = gatewayFetch((m) =>
      m === 'POST'
        ? problem(400, {
            code: 'INVALID_SPEC',
            title: 'The job cannot be submitted',
            detail: 'the subnet is unknown',
            errors: [{ path: 'subnet', message: "no subnet 'demo'", line: 15, column: 9 }],
          })
        : undefined,
    );
    const r = await run(['job', 'submit', spec, '--idempotency-key', 'run-42'], { fetch: g.fetch });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${spec}:15:9: subnet: no subnet 'demo'`);
    const req = g.requests[0]!;
    expect(req.headers.get('content-type')).toBe('application/yaml');
    expect(req.headers.get('idempotency-key')).toBe('run-42');
    expect(req.body).toContain('first-multi-provider-ddp');
    const json = await run(['job', 'submit', '--json', spec], { fetch: g.fetch });
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: false,
      exitCode: 1,
      problem: { code: 'INVALID_SPEC', errors: [{ path: 'subnet' }] },
    });
    expect(g.requests[1]!.headers.get('idempotency-key')).toMatch(/^cli-/);
  });

  it('job ls prints a table and the next page', async () => {
    const g = gatewayFetch(() =>
      Response.json({
        items: [
          jobFixture({
            status: 'running',
            cost: { asset: 'NTX', escrow: null, accrued: '1500000', remaining: null, settled: null },
          }),
        ],
        nextCursor: 'abc',
      }),
    );
    const r = await run(['job', 'ls', '--status', 'running,queued', '--limit', '1'], { fetch: g.fetch });
    expect(r.stdout).toBe(
      [
        'JOB  NAME  STATUS   GPUS  SUBNET  SUBMITTED                 COST',
        'j1   ddp   running  4     demo    2030-01-01T00:00:00.000Z  1.5 NTX',
        'more: gpunet job ls --cursor abc',
        '',
      ].join('\n'),
    );
    expect(g.requests[0]!.url.search).toBe('?status=running%2Cqueued&limit=1');
  });

  it('providers ls sends the filters the API takes', async () => {
    const g = gatewayFetch(() =>
      Response.json({
        items: [
          {
            providerId: 'U'.padEnd(56, 'A'),
            name: 'rack-1',
            simulated: true,
            isolation: 'host-process',
            subnets: ['demo'],
            asset: 'NTX',
            gpus: [
              {
                uuid: 'g1',
                model: 'H100',
                vendor: 'nvidia',
                vramBytes: 80 * 2 ** 30,
                priceFloorMinor: '2000000',
                verification: { status: 'simulated' },
              },
              {
                uuid: 'g2',
                model: 'H100',
                vendor: 'nvidia',
                vramBytes: 80 * 2 ** 30,
                priceFloorMinor: '1500000',
                verification: { status: 'simulated' },
              },
            ],
          },
          {
            providerId: 'U'.padEnd(56, 'L'),
            name: 'fast-claims',
            simulated: false,
            isolation: 'container',
            subnets: ['demo'],
            asset: 'NTX',
            gpus: [
              {
                uuid: 'l0',
                model: 'H100',
                vendor: 'nvidia',
                vramBytes: 80 * 2 ** 30,
                priceFloorMinor: '1000000',
                verification: { status: 'unverified' },
              },
              {
                uuid: 'l1',
                model: 'H100',
                vendor: 'nvidia',
                vramBytes: 80 * 2 ** 30,
                priceFloorMinor: '1000000',
                verification: { status: 'unverified' },
              },
            ],
          },
        ],
        nextCursor: null,
      }),
    );
    const r = await run(
      ['providers', 'ls', '--model', 'H100', '--min-vram', '40GB', '--min-gpus', '2', '--subnet', 'demo'],
      { fetch: g.fetch },
    );
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^PROVIDER +NAME +FREE GPUS +VERIFIED +ISOLATION +PRICE FLOOR/);
    expect(r.stdout).toMatch(
      /rack-1 \(simulated\) {2}2× H100 80GiB {2}simulated {2,}host-process {2}≥ 1\.5 NTX/,
    );
    // The liar's two "H100"s are listed free, and say they are not verified, and where to see why.
    expect(r.stdout).toContain(
      'fast-claims         2× H100 80GiB  0/2 verified, 2 unverified  container     ≥ 1 NTX',
    );
    expect(r.stdout).toContain('a GPU failed its challenge: gpunet providers show <provider> says why');
    expect(Object.fromEntries(g.requests[0]!.url.searchParams)).toEqual({
      model: 'H100',
      minVramBytes: '40000000000',
      minGpus: '2',
      subnet: 'demo',
    });
  });

  it.each([
    ['every GPU verified', ['verified', 'verified'], '2/2 verified'],
    ['every GPU failed its challenge', ['unverified', 'unverified'], '0/2 verified, 2 unverified'],
    ['one verified, one failed', ['verified', 'unverified'], '1/2 verified, 1 unverified'],
    ['not challenged yet', ['pending'], '0/1 verified, 1 pending'],
    ['a simulated provider', ['simulated', 'simulated'], 'simulated'],
    [
      'a mix',
      ['verified', 'pending', 'simulated', 'unverified'],
      '1/4 verified, 1 unverified, 1 pending, 1 simulated',
    ],
  ])('providers ls VERIFIED: %s', (_name, statuses, shown) => {
    expect(verifiedSummary(statuses.map((status) => ({ verification: { status } })))).toBe(shown);
  });

  it("providers show prints each GPU's verification, why one is unverified, and the latest challenges", async () => {
    const LIAR = 'U'.padEnd(56, 'L');
    const gpu = (index: number, status: string, since: string | null, challengeId: string | null) => ({
      uuid: `GPU-${index}`,
      index,
      model: 'NVIDIA H100 80GB HBM3',
      vendor: 'nvidia',
      vramBytes: 80 * 2 ** 30,
      priceFloorMinor: '2000000',
      available: index === 0,
      simulated: false,
      verification: { status, since, challengeId },
    });
    const evidence = (elapsedMs: number | null, failure: { kind: string; detail: string } | null) => ({
      seed: 'ab'.repeat(32),
      n: 4096,
      dtype: 'bf16',
      claimedTflops: 989,
      deadlineMs: 1200,
      elapsedMs,
      root: elapsedMs === null ? null : 'cd'.repeat(32),
      openedRows: [],
      failure,
      bytesSent: 120,
      bytesReceived: 96,
    });
    const provider = {
      providerId: LIAR,
      name: 'fast-claims',
      simulated: false,
      status: 'online',
      isolation: 'container',
      isolationDetail:
        'Docker 26.1.5 with runc: container root is host root (userns-remap or rootless Docker would map it to an unprivileged uid)',
      subnets: ['public'],
      asset: 'USDC',
      maxGpusPerJob: 8,
      gpus: [gpu(0, 'unverified', '2030-01-01T00:10:00.000Z', 'c1'), gpu(1, 'pending', null, null)],
      reliability: {
        providerId: LIAR,
        score: 0.42,
        mismatches: 1,
        verifiedRuns: 3,
        failedRuns: 1,
        lastVerifiedAt: null,
        lastMismatchAt: '2030-01-01T00:10:00.000Z',
      },
      challenges: [
        {
          challengeId: 'c1',
          reason: 'registration',
          jobId: null,
          gpuUuid: 'GPU-0',
          outcome: 'failed',
          evidence: evidence(4100.4, { kind: 'late', detail: 'committed after 4100 ms' }),
          at: '2030-01-01T00:10:00.000Z',
        },
      ],
    };
    const g = gatewayFetch((_m, u) =>
      u.pathname === `/v1/providers/${LIAR}` ? Response.json(provider) : undefined,
    );
    const r = await run(['providers', 'show', LIAR], { fetch: g.fetch });
    expect(r.code).toBe(0);
    // docs/provider-guide.md shows this output: it is checked here, so the guide cannot drift.
    const guide = readFileSync(new URL('../../../docs/provider-guide.md', import.meta.url), 'utf8');
    const shown = /```\n(provider U[^`]*)```/.exec(guide)?.[1];
    expect(r.stdout).toBe(shown);
    expect(r.stdout.split('\n').slice(0, 3)).toEqual([
      `provider ${LIAR}`,
      '  name fast-claims, online, subnets public',
      '  isolation container: Docker 26.1.5 with runc: container root is host root (userns-remap or rootless Docker would map it to an unprivileged uid)',
    ]);
    expect(r.stdout).toContain('  GPU 0 unverified: late: committed after 4100 ms\n');
    expect(r.stdout).toMatch(
      /registration {2}0 {4}failed {3}4096 bf16 {2}4100\/1200 {12}989 {13}late: committed/,
    );
    // A failure detail cannot smuggle terminal escapes onto the screen.
    const escaped = structuredClone(provider);
    escaped.challenges[0]!.evidence.failure = { kind: 'late', detail: 'late\u001b[2J' };
    const clean = await run(['providers', 'show', LIAR], {
      fetch: gatewayFetch(() => Response.json(escaped)).fetch,
    });
    expect(clean.stdout).not.toContain('\u001b');
    // --json: the gateway's document as it came.
    expect(JSON.parse((await run(['providers', 'show', LIAR, '--json'], { fetch: g.fetch })).stdout)).toEqual(
      provider,
    );

    // A simulated provider: every GPU line and every challenge line says so.
    const SIM = 'U'.padEnd(56, 'S');
    const simulated = {
      ...provider,
      providerId: SIM,
      name: 'demo-node',
      simulated: true,
      reliability: null,
      gpus: [0, 1].map((i) => ({ ...gpu(i, 'simulated', null, null), simulated: true })),
      challenges: [],
    };
    const sim = await run(['providers', 'show', SIM], {
      fetch: gatewayFetch(() => Response.json(simulated)).fetch,
    });
    const lines = sim.stdout.split('\n');
    expect(lines[1]).toBe('  name demo-node (simulated), online, subnets public');
    expect(lines).toContain('  reliability: no record yet');
    const gpuLines = lines.filter((l) => /^[01] /.test(l));
    expect(gpuLines).toHaveLength(2);
    for (const l of gpuLines) expect(l).toMatch(/NVIDIA H100 80GB HBM3 \(simulated\).*simulated/);
    expect(lines).toContain('no challenges yet');

    // A bad id is a usage error before any request; the gateway's 404 is exit 4 with its detail.
    const none = gatewayFetch(() =>
      problem(404, { code: 'NOT_FOUND', title: 'Not found', detail: `no provider ${SIM}` }),
    );
    expect((await run(['providers', 'show', 'rack-1'], { fetch: none.fetch })).code).toBe(2);
    expect((await run(['providers', 'show'], { fetch: none.fetch })).code).toBe(2);
    expect(none.requests).toEqual([]);
    const missing = await run(['providers', 'show', SIM], { fetch: none.fetch });
    expect(missing.code).toBe(4);
    expect(missing.stderr).toContain(`no provider ${SIM}`);
  });

  it('subnet join / account balance', async () => {
    const g = gatewayFetch(
      (m, u) =>
        u.pathname === '/v1/subnets/ai/join'
          ? Response.json(
              {
                requestId: 'r1',
                type: 'subnet.join-requested',
                status: 'accepted',
                detail: 'join of subnet ai requested',
              },
              { status: 202 },
            )
          : undefined,
      (m, u) =>
        u.pathname === '/v1/accounts/balances'
          ? Response.json({
              accounts: [
                {
                  accountId: 'NTX:wallet:acme',
                  asset: 'NTX',
                  purpose: 'wallet',
                  ownerId: 'acme',
                  balance: '10000000',
                  available: '9300000',
                  creditsPending: '0',
                  creditsPosted: '10000000',
                  debitsPending: '700000',
                  debitsPosted: '0',
                },
              ],
            })
          : undefined,
    );
    const join = await run(['subnet', 'join', 'ai', '--stake', '1000000'], { fetch: g.fetch });
    expect(join.stdout).toContain('join of subnet ai requested (request r1');
    expect(JSON.parse(g.requests[0]!.body!)).toEqual({ stake: '1000000' });
    const bal = await run(['account', 'balance'], { fetch: g.fetch });
    expect(bal.stdout).toContain('NTX:wallet:acme  wallet   10 NTX   9.3 NTX    0 NTX       0.7 NTX');
  });

  it('account deposit converts whole units with the asset decimals and POSTs them once per key', async () => {
    const g = gatewayFetch((m, u, init) =>
      m === 'POST' && u.pathname === '/v1/accounts/deposits'
        ? Response.json(
            {
              chainTxId: 'sim-7',
              ownerId: 'acme',
              asset: 'NTX',
              amount: (JSON.parse(init!.body as string) as { amount: string }).amount,
              available: '100500000',
            },
            { status: 201 },
          )
        : undefined,
    );
    const text = await run(['account', 'deposit', '0.5'], { fetch: g.fetch });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toBe('deposited 0.5 NTX to NTX:wallet:acme (chain tx sim-7); available 100.5 NTX\n');
    expect(JSON.parse(g.requests[0]!.body!)).toEqual({ asset: 'NTX', amount: '500000' });
    expect(g.requests[0]!.headers.get('idempotency-key')).toMatch(/^cli-/);
    const json = await run(['account', 'deposit', '100', '--json', '--idempotency-key', 'd-1'], {
      fetch: g.fetch,
    });
    expect(JSON.parse(json.stdout)).toMatchObject({ amount: '100000000', available: '100500000' });
    expect(g.requests[1]!.headers.get('idempotency-key')).toBe('d-1');
    expect(JSON.parse(g.requests[1]!.body!)).toEqual({ asset: 'NTX', amount: '100000000' });
    const usd = await run(['account', 'deposit', '12.34', '--asset', 'USD'], { fetch: g.fetch });
    expect(JSON.parse(g.requests[2]!.body!)).toEqual({ asset: 'USD', amount: '1234' });
    expect(usd.code).toBe(0);
    const custom = await run(['account', 'deposit', '1', '--asset', 'GPU', '--decimals', '3'], {
      fetch: g.fetch,
    });
    expect(custom.code, custom.stderr).toBe(0);
    expect(JSON.parse(g.requests[3]!.body!)).toEqual({ asset: 'GPU', amount: '1000' });

    for (const [argv, message] of [
      [['0.0000001'], 'more than 6 decimal places'],
      [['-1'], 'Unknown option'],
      [['1,5'], 'invalid amount'],
      [['1e6'], 'invalid amount'],
      [['0'], 'more than 0'],
      [[], 'exactly one amount'],
      [['1', '2'], 'exactly one amount'],
      [['1', '--asset', 'GPU'], '--decimals'],
      [['1', '--asset', 'ntx'], '--asset'],
      [['1', '--asset', 'GPU', '--decimals', '99'], '--decimals'],
    ] as const) {
      const bad = await run(['account', 'deposit', ...argv], { fetch: g.fetch });
      expect(bad.code, argv.join(' ')).toBe(2);
      expect(bad.stderr).toContain(message);
    }
    expect(g.requests).toHaveLength(4);
  });

  it('account deposit on a real chain: the 503 problem is printed, exit 1', async () => {
    const g = gatewayFetch((m, u) =>
      u.pathname === '/v1/accounts/deposits'
        ? problem(503, {
            code: 'UPSTREAM_UNAVAILABLE',
            title: 'A service the gateway asks is unavailable',
            detail: 'on a real chain, deposit with a wallet',
          })
        : undefined,
    );
    const r = await run(['account', 'deposit', '10'], { fetch: g.fetch });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('on a real chain, deposit with a wallet');
  });

  it('job explain: nodes, the step split, every figure with its source and age, alternatives and why they lost', async () => {
    const g = gatewayFetch(
      (_m, u) => (u.pathname === '/v1/jobs/j1/explanation' ? Response.json(explanationFixture()) : undefined),
      (_m, u) => (u.pathname === '/v1/jobs/j1' ? Response.json(jobFixture()) : undefined),
    );
    const r = await run(['job', 'explain', 'j1'], { fetch: g.fetch });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [
        'job j1: placed (attempt 1, explained 2030-01-01T00:00:00.000Z)',
        '',
        'allocation main: 2 GPUs on 2 nodes in 2 sites, 3 NTX/h (strategy pack)',
        '  predicted step 250 ms = compute 55 ms + communication 195 ms (intra-host 0 µs, intra-site 0 µs, inter-site 195 ms)',
        '',
        '  NODE  PROVIDER  SITE    GPUS',
        '  a0    UPROV-A   site-a  1',
        '  b0    UPROV-B   site-b  1',
        '',
        '  GPUs, slowest first:',
        '    b0 GPU-b H100-SXM: bf16 900 TFLOPS (reference) — sets the pace',
        '    a0 GPU-a H100-SXM: bf16 912.4 TFLOPS (measured 3 min before placing)',
        '  links between the chosen nodes:',
        '    a0 ↔ b0 (inter-site): rtt 80.2 ms (measured 3 min before placing), bandwidth 10 Gbit/s (measured 3 min before placing), NIC-capped, relayed',
        '  best alternatives not chosen:',
        '    1. a0×1 @site-a, c0×1 @site-c: step 400 ms, 2 NTX/h',
        '       lost (constraint): RTT 150 ms (estimated) between a0 and c0 exceeds max_rtt 100 ms',
        '',
      ].join('\n'),
    );
    const json = await run(['job', 'explain', '--json', 'j1'], { fetch: g.fetch });
    expect(JSON.parse(json.stdout)).toEqual(explanationFixture());
    // Not tried yet: the gateway's 404, exit 4.
    const none = await run(['job', 'explain', 'j2'], { fetch: g.fetch });
    expect(none.code).toBe(4);
  });

  it('job explain of a job not placed: the code, the sentence and every reason', async () => {
    const failure = {
      ...explanationFixture(),
      status: 'waiting',
      attempt: 0,
      outcome: {
        kind: 'failure',
        code: 'Unschedulable',
        allocation: 'main',
        message: '8 GPUs asked; only 4 match',
        reasons: [
          { plugin: 'gang-assembly', reason: 'TooFewGpus', message: 'only 4 are free', gpus: null },
          { plugin: 'vram', reason: 'InsufficientVram', message: 'below 80 GB', gpus: 12 },
          {
            plugin: 'simulated-gpus',
            reason: 'SimulatedRefused',
            message: "simulated GPUs refused by subnet 'live'",
            gpus: 2,
          },
          {
            plugin: 'verified-gpus',
            reason: 'Unverified',
            message: "unverified: challenge c-1 failed (late); verified GPUs required by subnet 'live'",
            gpus: 2,
          },
        ],
      },
    };
    const g = gatewayFetch(
      (_m, u) => (u.pathname === '/v1/jobs/j1/explanation' ? Response.json(failure) : undefined),
      (_m, u) => (u.pathname === '/v1/jobs/j1' ? Response.json(jobFixture()) : undefined),
    );
    const r = await run(['job', 'explain', 'j1'], { fetch: g.fetch });
    expect(r.stdout).toBe(
      [
        'job j1: waiting (attempt 0, explained 2030-01-01T00:00:00.000Z)',
        '  not placed: Unschedulable (allocation main)',
        '  8 GPUs asked; only 4 match',
        '  reasons:',
        '    gang-assembly/TooFewGpus: only 4 are free',
        '    vram/InsufficientVram: below 80 GB (12 GPUs)',
        "    simulated-gpus/SimulatedRefused: simulated GPUs refused by subnet 'live' (2 GPUs)",
        "    verified-gpus/Unverified: unverified: challenge c-1 failed (late); verified GPUs required by subnet 'live' (2 GPUs)",
        '',
      ].join('\n'),
    );
  });

  it('spec explain and job explain say in their help which is which', async () => {
    expect((await run(['spec', 'explain', '--help'])).stdout).toContain('gpunet job explain <job-id>');
    expect((await run(['job', 'explain', '--help'])).stdout).toContain(
      '`gpunet spec explain` is another thing',
    );
  });

  it('maps 403 to 3 and 404 to 4 (with --json, the problem on stdout)', async () => {
    const g = gatewayFetch((m, u) =>
      u.pathname.endsWith('/cancel')
        ? problem(403, { code: 'FORBIDDEN', title: 'Forbidden', detail: 'the key lacks submit' })
        : undefined,
    );
    expect((await run(['job', 'cancel', 'j1'], { fetch: g.fetch })).code).toBe(3);
    const missing = await run(['job', 'get', '--json', 'j9'], { fetch: g.fetch });
    expect(missing.code).toBe(4);
    expect(JSON.parse(missing.stdout)).toMatchObject({
      ok: false,
      exitCode: 4,
      problem: { code: 'NOT_FOUND' },
    });
  });

  it('lists the exit codes in --help', async () => {
    const root = await run(['--help']);
    expect(root.stdout).toContain('login ');
    expect(root.stdout).toContain('3 not logged in, bad or revoked API key');
    expect((await run(['job', 'submit', '--help'])).stdout).toContain('5 the gateway is unreachable');
  });
});

describe('the command line (fuzz)', () => {
  it('any argument list ends with a documented exit code, never an exception', async () => {
    const job = {
      jobId: 'j1',
      tenantId: 't',
      name: 'n',
      subnetId: 'demo',
      asset: 'NTX',
      gpus: 1,
      gpuClasses: [],
      maxPricePerGpuHour: '1',
      maxDurationSeconds: 60,
      status: 'completed',
      attempt: null,
      reason: null,
      submittedAt: 'x',
      updatedAt: 'x',
      cancelRequestedAt: null,
      placement: null,
      ranks: null,
      usage: null,
      cost: { asset: 'NTX', escrow: null, accrued: '0', remaining: null, settled: null },
    };
    const g = gatewayFetch((m, u) => {
      if (u.pathname.endsWith('/events') || u.pathname.endsWith('/logs'))
        return new Response('event: end\ndata: {"status":"completed"}\n\n', {
          headers: { 'content-type': 'text/event-stream' },
        });
      if (u.pathname === '/v1/jobs' && m === 'GET') return Response.json({ items: [job], nextCursor: null });
      if (u.pathname.startsWith('/v1/jobs')) return Response.json(job);
      return undefined;
    });
    const words = fc.constantFrom(
      'job',
      'submit',
      'ls',
      'get',
      'logs',
      'follow',
      'cancel',
      'statement',
      'providers',
      'subnet',
      'create',
      'join',
      'account',
      'balance',
      'withdraw',
      'login',
      'logout',
      '--json',
      '--follow',
      '-f',
      '--limit',
      '--status',
      '--rank',
      '--gateway',
      '--key',
      '--stake',
      '--asset',
      '--amount',
      '--min-vram',
      '--cursor',
      'j1',
      '3',
      '-1',
      'running',
      '',
      'x.yaml',
      '--help',
      'http://gw.test',
      KEY,
      '--bogus',
    );
    await fc.assert(
      fc.asyncProperty(fc.array(words, { maxLength: 7 }), async (argv) => {
        const r = await run(argv, { fetch: g.fetch });
        expect([0, 1, 2, 3, 4, 5]).toContain(r.code);
      }),
      { numRuns: 400 },
    );
  });
});

describe('gpunet subnet governance (fake gateway)', () => {
  const SUBNET = '/v1/subnets/gov';
  const PARAMS_YAML = [
    'gpuClasses: [H100-80GB]',
    'pricing: {mode: fixed, pricePerGpuHour: {H100-80GB: "1500000"}}',
    'billingIncrementSeconds: 60',
    'minimumChargeSeconds: 60',
    'subnetFeeBps: 300',
    'providerMinStake: "1000000"',
    'slashing: {host-lost: 1000}',
    'unbondingSeconds: 3600',
    'membership: {mode: open}',
    '',
  ].join('\n');
  const PARAMS = {
    gpuClasses: ['H100-80GB'],
    pricing: { mode: 'fixed', pricePerGpuHour: { 'H100-80GB': '1500000' } },
    billingIncrementSeconds: 60,
    minimumChargeSeconds: 60,
    subnetFeeBps: 300,
    providerMinStake: '1000000',
    slashing: { 'host-lost': 1000 },
    unbondingSeconds: 3600,
    membership: { mode: 'open' },
  };

  /** The gateway accepting every subnet request: the request's type in the answer, a proposal id for proposals. */
  const accepting = () =>
    gatewayFetch((m, u, init) => {
      if (m === 'GET' || !u.pathname.startsWith(`${SUBNET}/`)) return undefined;
      const body =
        init?.body === undefined ? {} : (JSON.parse(init.body as string) as Record<string, unknown>);
      const proposal = u.pathname.endsWith('/proposals') || u.pathname.endsWith('/appeal');
      return Response.json(
        {
          requestId: 'r1',
          type: 'subnet.x-requested',
          status: 'accepted',
          detail: `${m} ${u.pathname} requested`,
          ...(proposal ? { proposalId: (body['proposalId'] as string | undefined) ?? 'gen-1' } : {}),
        },
        { status: 202 },
      );
    });

  it('sends each request to its route with its body and an Idempotency-Key', async () => {
    const g = accepting();
    const files = { 'params.yaml': PARAMS_YAML, 'params.json': JSON.stringify(PARAMS) };
    const cases: { argv: string[]; method: string; path: string; body: unknown; out: string }[] = [
      {
        argv: ['subnet', 'update', 'gov', '--parameters', 'params.json'],
        method: 'POST',
        path: `${SUBNET}/parameters`,
        body: { parameters: PARAMS },
        out: `POST ${SUBNET}/parameters requested (request r1`,
      },
      {
        argv: ['subnet', 'leave', 'gov'],
        method: 'POST',
        path: `${SUBNET}/leave`,
        body: undefined,
        out: `POST ${SUBNET}/leave requested`,
      },
      {
        argv: ['subnet', 'propose', 'gov', '--title', 'cheaper H100', '--parameters', 'params.yaml'],
        method: 'POST',
        path: `${SUBNET}/proposals`,
        body: { title: 'cheaper H100', change: { kind: 'parameters', parameters: PARAMS } },
        out: 'proposal gen-1: ',
      },
      {
        argv: [
          'subnet',
          'propose',
          'gov',
          '--title',
          't',
          '--parameters',
          'params.yaml',
          '--proposal-id',
          'p-9',
        ],
        method: 'POST',
        path: `${SUBNET}/proposals`,
        body: { proposalId: 'p-9', title: 't', change: { kind: 'parameters', parameters: PARAMS } },
        out: 'proposal p-9: ',
      },
      {
        argv: ['subnet', 'vote', 'gov', 'p-fee', 'no'],
        method: 'POST',
        path: `${SUBNET}/proposals/p-fee/votes`,
        body: { choice: 'no' },
        out: 'votes requested',
      },
      {
        argv: ['subnet', 'delegate', 'gov', '--provider', 'UAAAA', '--amount', '700000'],
        method: 'POST',
        path: `${SUBNET}/delegations`,
        body: { providerId: 'UAAAA', amount: '700000' },
        out: 'delegations requested',
      },
      {
        argv: ['subnet', 'undelegate', 'gov', '--provider', 'UAAAA'],
        method: 'DELETE',
        path: `${SUBNET}/delegations/UAAAA`,
        body: undefined,
        out: `DELETE ${SUBNET}/delegations/UAAAA requested`,
      },
      {
        argv: ['subnet', 'appeal', 'gov', SLASH_ID],
        method: 'POST',
        path: `${SUBNET}/slashes/${SLASH_ID}/appeal`,
        body: {},
        out: 'proposal gen-1: ',
      },
      {
        argv: ['subnet', 'appeal', 'gov', SLASH_ID, '--title', 'the host was up', '--proposal-id', 'ap-1'],
        method: 'POST',
        path: `${SUBNET}/slashes/${SLASH_ID}/appeal`,
        body: { title: 'the host was up', proposalId: 'ap-1' },
        out: 'proposal ap-1: ',
      },
    ];
    for (const c of cases) {
      g.requests.length = 0;
      const r = await run(c.argv, { fetch: g.fetch, files });
      expect(r.code, `${c.argv.join(' ')}: ${r.stderr}`).toBe(0);
      expect(r.stdout, c.argv.join(' ')).toContain(c.out);
      expect(g.requests).toHaveLength(1);
      const sent = g.requests[0]!;
      expect([sent.method, sent.url.pathname], c.argv.join(' ')).toEqual([c.method, c.path]);
      expect(sent.body === undefined ? undefined : JSON.parse(sent.body), c.argv.join(' ')).toEqual(c.body);
      expect(sent.headers.get('idempotency-key')).toMatch(/^cli-/);
    }
    const keyed = await run(['subnet', 'leave', 'gov', '--idempotency-key', 'leave-1', '--json'], {
      fetch: g.fetch,
    });
    expect(JSON.parse(keyed.stdout)).toMatchObject({ requestId: 'r1', status: 'accepted' });
    expect(g.requests.at(-1)!.headers.get('idempotency-key')).toBe('leave-1');
  });

  it("refuses bad command lines with exit 2 before any request; the gateway's field errors exit 1 naming the field", async () => {
    const g = accepting();
    const files = { 'params.yaml': PARAMS_YAML, 'broken.yaml': 'a: [' };
    for (const argv of [
      ['subnet', 'update', 'gov'],
      ['subnet', 'update', 'gov', '--parameters', 'missing.yaml'],
      ['subnet', 'update', 'gov', '--parameters', 'broken.yaml'],
      ['subnet', 'leave'],
      ['subnet', 'leave', 'bad id!'],
      ['subnet', 'propose', 'gov', '--parameters', 'params.yaml'],
      ['subnet', 'propose', 'gov', '--title', '', '--parameters', 'params.yaml'],
      ['subnet', 'propose', 'gov', '--title', 't'],
      ['subnet', 'propose', 'gov', '--title', 't', '--parameters', 'params.yaml', '--proposal-id', 'a b'],
      ['subnet', 'proposals'],
      ['subnet', 'proposals', 'gov', 'bad id!'],
      ['subnet', 'vote', 'gov', 'p-fee'],
      ['subnet', 'vote', 'gov', 'p-fee', 'maybe'],
      ['subnet', 'delegate', 'gov', '--amount', '5'],
      ['subnet', 'delegate', 'gov', '--provider', 'UAAAA', '--amount', '0'],
      ['subnet', 'delegate', 'gov', '--provider', 'UAAAA', '--amount', '1.5'],
      ['subnet', 'undelegate', 'gov'],
      ['subnet', 'appeal', 'gov', 'slash-1'],
      ['subnet', 'appeal', 'gov'],
      ['subnet', 'statement', 'gov', '--limit', '0'],
    ]) {
      const r = await run(argv, { fetch: g.fetch, files });
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stderr, argv.join(' ')).not.toBe('');
    }
    expect(g.requests).toEqual([]);

    const refusing = gatewayFetch(() =>
      problem(400, {
        code: 'INVALID_REQUEST',
        title: 'The request is invalid',
        detail: 'invalid request',
        errors: [{ path: 'body.parameters.subnetFeeBps', message: 'Too big: expected number to be <=5000' }],
      }),
    );
    const r = await run(['subnet', 'update', 'gov', '--parameters', 'params.yaml'], {
      fetch: refusing.fetch,
      files,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('body.parameters.subnetFeeBps: Too big: expected number to be <=5000');
  });

  it('get prints the health, members with standing, delegations, open proposals, held slashes and the last refusal', async () => {
    const g = gatewayFetch((m, u) => (u.pathname === SUBNET ? Response.json(subnetFixture()) : undefined));
    const r = await run(['subnet', 'get', 'gov'], { fetch: g.fetch });
    expect(r.code, r.stderr).toBe(0);
    const A = 'U'.padEnd(56, 'A');
    const B = 'U'.padEnd(56, 'B');
    expect(r.stdout).toBe(
      [
        'subnet gov (version 2)',
        '  owner            owner, stake 5 NTX',
        '  governed         stake vote: quorum 20 %, threshold 60 %, voting 600 s, delay 0 s',
        '  treasury         0.12 NTX',
        '  providers        2, staked 3.8 NTX',
        '  jobs settled     3: 0.9 NTX to providers, 0.045 NTX in fees',
        '  health           2 active, 1 in good standing; 7200 GPU-seconds settled, volume 0.963 NTX',
        '  stake            9.5 NTX in all, 0.7 NTX delegated',
        '  slashed          0 NTX to treasury, 0 NTX burned, 0 NTX refunded',
        '  your last refused request: vote (voting-closed) at 2030-01-01T00:11:00.000Z: proposal p-old closed at 2030-01-01T00:10:00.000Z',
        '',
      ].join('\n') +
        table(
          ['PROVIDER', 'STAKE', 'DELEGATED', 'STATUS', 'STANDING', 'JAILED UNTIL', 'SLASHED'],
          [
            [A, '2 NTX', '0.7 NTX', 'active', 'good', '', '0 NTX'],
            [B, '1.8 NTX', '0 NTX', 'active', 'jailed', '2030-01-02T00:00:00.000Z', '0.2 NTX'],
          ],
        ) +
        '\ndelegations\n' +
        table(
          ['DELEGATOR', 'PROVIDER', 'AMOUNT', 'STATUS', 'UNBONDS AT', 'SLASHED', 'REWARDS'],
          [['acme', 'UAAAAAAAAAAA…', '0.7 NTX', 'active', '', '0 NTX', '0.0012 NTX']],
        ) +
        '\nopen proposals\n' +
        table(
          ['PROPOSAL', 'KIND', 'YES', 'NO', 'VOTING ENDS', 'TITLE'],
          [['p-fee', 'parameters', '2 NTX', '0.5 NTX', '2030-01-01T01:00:00.000Z', 'lower the fee']],
        ) +
        '\nheld slashes\n' +
        table(
          ['SLASH', 'PROVIDER', 'KIND', 'AMOUNT', 'TO', 'APPEAL UNTIL', 'APPEAL'],
          [[SLASH_ID, 'UBBBBBBBBBBB…', 'host-lost', '0.2 NTX', 'treasury', '2030-01-01T03:00:00.000Z', '']],
        ),
    );
    // An older settlement's answer without the new fields, and no refusal of yours: the lines it has.
    const bare = gatewayFetch((m, u) =>
      u.pathname === SUBNET
        ? Response.json({
            ...subnetFixture({ lastRejection: null }),
            proposals: undefined,
            delegations: undefined,
            slashes: undefined,
            health: undefined,
          })
        : undefined,
    );
    const old = await run(['subnet', 'get', 'gov'], { fetch: bare.fetch });
    expect(old.code, old.stderr).toBe(0);
    expect(old.stdout).not.toMatch(/health|refused|delegations|open proposals|held slashes/);
    expect(old.stdout).toContain('PROVIDER');
  });

  it('proposals lists them with their tally, or shows one', async () => {
    const g = gatewayFetch(
      (m, u) => (u.pathname === SUBNET ? Response.json(subnetFixture()) : undefined),
      (m, u) =>
        u.pathname === `${SUBNET}/proposals`
          ? Response.json({ items: subnetFixture().proposals })
          : undefined,
      (m, u) =>
        u.pathname === `${SUBNET}/proposals/p-old`
          ? Response.json(
              proposalFixture({
                proposalId: 'p-old',
                kind: 'overturn-slash',
                slashId: SLASH_ID,
                decidedBy: 'owner',
                status: 'applied',
                reason: 'threshold-met',
                takesEffectAt: '2030-01-01T01:00:00.000Z',
                title: 'appeal',
              }),
            )
          : undefined,
    );
    const list = await run(['subnet', 'proposals', 'gov'], { fetch: g.fetch });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toBe(
      table(
        ['PROPOSAL', 'STATUS', 'KIND', 'YES', 'NO', 'ABSTAIN', 'VOTING ENDS', 'TITLE'],
        [
          [
            'p-fee',
            'open',
            'parameters',
            '2 NTX',
            '0.5 NTX',
            '0 NTX',
            '2030-01-01T01:00:00.000Z',
            'lower the fee',
          ],
          [
            'p-old',
            'rejected (quorum-not-met)',
            'parameters',
            '2 NTX',
            '0.5 NTX',
            '0 NTX',
            '2030-01-01T01:00:00.000Z',
            'raise the minimum',
          ],
        ],
      ),
    );
    const one = await run(['subnet', 'proposals', 'gov', 'p-old'], { fetch: g.fetch });
    expect(one.stdout).toBe(
      [
        'proposal p-old in gov: appeal',
        '  proposer         acme',
        `  change           overturn ${SLASH_ID}, decided by the owner`,
        '  status           applied (threshold-met)',
        '  votes            yes 2 NTX, no 0.5 NTX, abstain 0 NTX of 10 NTX',
        '  voting ends      2030-01-01T01:00:00.000Z',
        '  takes effect     2030-01-01T01:00:00.000Z',
        '',
      ].join('\n'),
    );
    const missing = await run(['subnet', 'proposals', 'gov', 'p-none'], { fetch: g.fetch });
    expect(missing.code).toBe(4);
    expect(missing.stderr).toContain(`no ${SUBNET}/proposals/p-none`);
  });

  it('statement prints each stake account with its entries and the next page', async () => {
    const A = 'U'.padEnd(56, 'A');
    const entry = (sequence: number, account: string) => ({
      transferId: `t${sequence}`,
      sequence,
      kind: 'posted',
      code: 'delegate',
      debitAccountId: 'NTX:wallet:acme',
      creditAccountId: account,
      amount: '700000',
      pendingId: null,
      jobId: null,
      at: '2030-01-01T00:00:00.000Z',
      direction: 'credit',
    });
    const g = gatewayFetch((m, u) =>
      u.pathname === `${SUBNET}/statement`
        ? Response.json({
            subnetId: 'gov',
            asset: 'NTX',
            accounts: [
              {
                accountId: 'NTX:stake:acme@gov',
                role: 'stake',
                providerId: null,
                account: null,
                entries: [],
                nextAfterSequence: null,
              },
              {
                accountId: `NTX:stake:acme@gov@${A}`,
                role: 'delegation',
                providerId: A,
                account: {
                  accountId: `NTX:stake:acme@gov@${A}`,
                  asset: 'NTX',
                  purpose: 'stake',
                  ownerId: `acme@gov@${A}`,
                  debitsPending: '0',
                  debitsPosted: '0',
                  creditsPending: '0',
                  creditsPosted: '700000',
                  balance: '700000',
                  available: '700000',
                },
                entries: [entry(7, `NTX:stake:acme@gov@${A}`)],
                nextAfterSequence: 7,
              },
            ],
          })
        : undefined,
    );
    const r = await run(['subnet', 'statement', 'gov', '--after', '3', '--limit', '1'], { fetch: g.fetch });
    expect(r.code, r.stderr).toBe(0);
    expect(g.requests[0]!.url.search).toBe('?afterSequence=3&limit=1');
    expect(r.stdout).toBe(
      [
        'NTX:stake:acme@gov (your stake): no account yet',
        '  no entries',
        `NTX:stake:acme@gov@${A} (delegated to ${A}): balance 0.7 NTX, available 0.7 NTX`,
        table(
          ['  SEQ', 'AT', 'DIRECTION', 'AMOUNT', 'CODE', 'KIND'],
          [['  7', '2030-01-01T00:00:00.000Z', 'credit', '0.7 NTX', 'delegate', 'posted']],
        ).trimEnd(),
        'more: gpunet subnet statement gov --after 7',
        '',
      ].join('\n'),
    );
  });
});
