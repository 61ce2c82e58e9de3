import { describe, expect, it } from 'vitest';
import { generateApiKey, hashSecret, parseApiKey, secretMatches } from '../src/app/api-keys';
import { requestHash } from '../src/app/idempotency.store';
import { specFormatOf } from '../src/app/jobs.service';
import {
  ConflictError,
  InvalidSpecError,
  NotFoundError,
  RateLimitedError,
  UnauthenticatedError,
} from '../src/domain/gateway.errors';
import { decideIdempotency, IDEMPOTENCY_KEY_PATTERN } from '../src/domain/idempotency';
import { toProblem } from '../src/domain/problem';
import { takeToken } from '../src/domain/token-bucket';

describe('problem mapping', () => {
  it.each([
    { error: new UnauthenticatedError('no key'), status: 401, code: 'UNAUTHENTICATED' },
    { error: new NotFoundError('no job j1'), status: 404, code: 'NOT_FOUND' },
    { error: new ConflictError('ended'), status: 409, code: 'CONFLICT' },
    { error: new RateLimitedError(3), status: 429, code: 'RATE_LIMITED' },
    { error: { statusCode: 413, message: 'too big' }, status: 413, code: 'PAYLOAD_TOO_LARGE' },
    { error: { statusCode: 415, message: 'xml' }, status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
    { error: { statusCode: 418, message: 'teapot' }, status: 418, code: 'BAD_REQUEST' },
  ])('$code → $status', ({ error, status, code }) => {
    const problem = toProblem(error, '/v1/jobs');
    expect(problem).toMatchObject({ status, code, instance: '/v1/jobs' });
    expect(problem.type).toBe(`https://gpunet.io/problems/${code.toLowerCase().replaceAll('_', '-')}`);
  });

  it('keeps field issues with line:column', () => {
    const problem = toProblem(
      new InvalidSpecError([
        { path: 'budget', message: 'required', code: 'MISSING_FIELD', line: 3, column: 1 },
      ]),
      '/v1/jobs',
    );
    expect(problem.errors).toEqual([
      { path: 'budget', message: 'required', code: 'MISSING_FIELD', line: 3, column: 1 },
    ]);
    expect(problem.detail).toContain('budget (3:1)');
  });

  it('reveals nothing of an unexpected error', () => {
    const problem = toProblem(new Error('password=hunter2 at db'), '/x');
    expect(problem).toMatchObject({ status: 500, code: 'INTERNAL' });
    expect(JSON.stringify(problem)).not.toContain('hunter2');
    expect(toProblem({ statusCode: 502, message: 'upstream secret' }, '/x').status).toBe(500);
  });
});

describe('API keys', () => {
  it('generates keys that parse and match only their own hash', () => {
    const a = generateApiKey();
    const b = generateApiKey();
    expect(a.key).not.toBe(b.key);
    const parsed = parseApiKey(a.key);
    expect(parsed?.keyId).toBe(a.keyId);
    expect(secretMatches(parsed!.secret, a.secretHash)).toBe(true);
    expect(secretMatches(parsed!.secret, b.secretHash)).toBe(false);
    expect(a.secretHash).toBe(hashSecret(parsed!.secret));
    expect(a.secretHash).not.toContain(parsed!.secret);
  });

  it.each([
    '',
    'gpn_',
    'gpn_short_x',
    `gpn_AAAAAAAAAAAA_${'x'.repeat(42)}`,
    `xyz_AAAAAAAAAAAA_${'x'.repeat(43)}`,
  ])('refuses malformed key %j', (key) => expect(parseApiKey(key)).toBeNull());
});

describe('idempotency', () => {
  const hash = requestHash('POST', '/v1/jobs', 'application/yaml; charset=utf-8', 'spec');
  it('hashes the method, route, media type and body', () => {
    expect(requestHash('POST', '/v1/jobs', 'application/yaml', 'spec')).toBe(hash);
    expect(requestHash('POST', '/v1/jobs', 'application/json', 'spec')).not.toBe(hash);
    expect(requestHash('POST', '/v1/jobs', 'application/yaml', 'spec2')).not.toBe(hash);
  });
  it('decides proceed, replay or mismatch', () => {
    expect(decideIdempotency(null, hash)).toEqual({ kind: 'proceed' });
    expect(decideIdempotency({ requestHash: hash, status: 202, body: { a: 1 } }, hash)).toEqual({
      kind: 'replay',
      status: 202,
      body: { a: 1 },
    });
    expect(decideIdempotency({ requestHash: 'other', status: 202, body: null }, hash)).toEqual({
      kind: 'mismatch',
    });
  });
  it.each([
    ['abc-123', true],
    ['a'.repeat(255), true],
    ['a'.repeat(256), false],
    ['with space', false],
    ['', false],
  ])('key %j valid: %s', (key, valid) => expect(IDEMPOTENCY_KEY_PATTERN.test(key)).toBe(valid));
});

describe('token bucket', () => {
  const limits = { ratePerSecond: 2, burst: 2 };
  it('allows a burst, then refills at the rate', () => {
    let state = undefined as Parameters<typeof takeToken>[0];
    const take = (now: number) => {
      const r = takeToken(state, limits, now);
      state = r.state;
      return r;
    };
    expect(take(0).ok).toBe(true);
    expect(take(0).ok).toBe(true);
    const refused = take(0);
    expect(refused).toMatchObject({ ok: false, retryAfterSeconds: 1 });
    expect(take(500).ok).toBe(true);
    expect(take(500).ok).toBe(false);
  });
});

describe('spec format', () => {
  it.each([
    ['application/json', 'json'],
    ['application/json; charset=utf-8', 'json'],
    ['application/yaml', 'yaml'],
    ['text/yaml', 'yaml'],
    ['', 'yaml'],
  ])('%s → %s', (type, format) => expect(specFormatOf(type)).toBe(format));
  it('refuses other types with 415', () => {
    expect(() => specFormatOf('application/xml')).toThrow(expect.objectContaining({ status: 415 }));
  });
});
