import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { REPO_ROOT, TestProcess } from '@gpunet/netns-testbed';
import { type NatsTestContext, type PostgresTestSchema, useNats, usePostgres } from '@gpunet/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleGateway } from '../scripts/bundle';
import { generateApiKey } from '../src/app/api-keys';

/*
 * The production start (ADR 0002, bench/gateway): the esbuild bundle on plain `node`, no tsx. The
 * bundle goes under the repository (its imports of packages resolve from `node_modules` there).
 */
describe('the gateway bundle on plain node (NATS + Postgres)', () => {
  const dist = resolve(REPO_ROOT, 'dist');
  mkdirSync(dist, { recursive: true });
  const dir = mkdtempSync(join(dist, 'gateway-bundle-test-'));
  let pg: PostgresTestSchema;
  let nats: NatsTestContext;
  let gateway: TestProcess | undefined;
  let url = '';
  const adminKey = generateApiKey().key;

  beforeAll(async () => {
    pg = await usePostgres({ label: 'gateway_bundle' });
    nats = await useNats({ label: 'gateway_bundle' });
    const bundle = await bundleGateway(join(dir, 'main.mjs'));
    gateway = new TestProcess('gateway-bundle', [process.execPath, bundle], {
      env: {
        ...process.env,
        DATABASE_URL: pg.connectionString,
        GATEWAY_SCHEMA: pg.schema,
        NATS_URL: [nats.servers].flat().join(','),
        SUBJECT_PREFIX: nats.prefix,
        GATEWAY_HOST: '127.0.0.1',
        GATEWAY_PORT: '0',
        GATEWAY_ADMIN_KEY: adminKey,
      },
      cwd: REPO_ROOT,
    });
    [, url = ''] = await gateway.waitForOutput(/"url":"([^"]+)"[^\n]*"msg":"gateway started"/, {
      timeoutMs: 60_000,
    });
  }, 90_000);
  afterAll(async () => {
    await gateway?.stop(10_000);
    await nats?.cleanup();
    await pg?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves: ready, a key authenticated, an unknown job a problem+json 404', async () => {
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    const res = await fetch(`${url}/v1/jobs/00000000-0000-4000-8000-000000000000`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });
});
