import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { relative, resolve } from 'node:path';
import { API_CLIENT_COMMAND, generatedApiClient } from '../scripts/api-client';
import { checkResponse, type Job } from '../src/app/api/responses';
import { jobFixture } from './fixtures';

describe("the gateway's API types", () => {
  // openapi-typescript and Prettier over ~4,500 lines take seconds on a busy machine: over vitest's 5 s.
  it(`the generated types and schemas are what openapi-typescript and docs/openapi.json give (run ${API_CLIENT_COMMAND})`, async () => {
    const files = await generatedApiClient();
    expect(Object.keys(files)).toHaveLength(2);
    for (const [path, text] of Object.entries(files)) {
      const name = relative(resolve(import.meta.dirname, '../../..'), path);
      expect(readFileSync(path, 'utf8'), `${name} is stale: run ${API_CLIENT_COMMAND}`).toBe(text);
    }
  }, 60_000);

  it("checks answers against the document's schema: a job passes, with fields a later gateway may add", () => {
    const job: Job = jobFixture();
    expect(checkResponse('Job', job)).toEqual({ ok: true, value: job });
    const later = { ...job, priority: 'high', cost: { ...job.cost, credits: '5' } };
    expect(checkResponse('Job', later)).toEqual({ ok: true, value: later });
  });

  it.each([
    ['a field of the wrong type', { gpus: '4' }, { path: 'gpus', message: 'must be integer' }],
    [
      'an unknown status',
      { status: 'paused' },
      { path: 'status', message: 'must be equal to one of the allowed values' },
    ],
    ['a nested field', { cost: { asset: 'NTX' } }, { path: 'cost.escrow', message: 'missing' }],
    [
      'money as a number',
      { maxPricePerGpuHour: 1 },
      { path: 'maxPricePerGpuHour', message: 'must be string' },
    ],
  ])('names the field at fault: %s', (_, change, issue) => {
    expect(checkResponse('Job', { ...jobFixture(), ...change })).toEqual({ ok: false, issue });
  });

  it('names the body itself when it is not an object, and a missing field by its name', () => {
    expect(checkResponse('JobList', 'Bad gateway')).toEqual({
      ok: false,
      issue: { path: '', message: 'must be object' },
    });
    const { jobId: _, ...noId } = jobFixture();
    expect(checkResponse('JobList', { items: [noId], nextCursor: null })).toEqual({
      ok: false,
      issue: { path: 'items.0.jobId', message: 'missing' },
    });
  });
});
