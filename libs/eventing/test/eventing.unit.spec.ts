import { DomainError, InvalidMessageError, defineStream } from '@gpunet/contracts';
import { describe, expect, it } from 'vitest';
import {
  backoffDelay,
  ConcurrencyError,
  errorCode,
  isRetryable,
  PermanentHandlerError,
  QueryTimeoutError,
  streamConfig,
  UndecodableMessageError,
} from '../src';
import { subjectMatcher } from '../src/jetstream/subject-filter';
import { assertSchemaName, isTransientInfrastructureError } from '../src';

describe('backoffDelay', () => {
  it.each([
    { attempt: 1, random: 0, expected: 50 },
    { attempt: 1, random: 1, expected: 100 },
    { attempt: 3, random: 0.5, expected: 300 },
    { attempt: 20, random: 1, expected: 30_000 },
    { attempt: 0, random: 0, expected: 50 },
  ])('attempt $attempt, random $random → $expected ms', ({ attempt, random, expected }) => {
    expect(backoffDelay(attempt, {}, () => random)).toBe(expected);
  });
  it('respects the policy', () => {
    expect(backoffDelay(4, { initialMs: 10, maxMs: 50, factor: 3 }, () => 1)).toBe(50);
  });
});

describe('retry classification', () => {
  it.each([
    {
      name: 'concurrency conflict',
      error: new ConcurrencyError('s', 1, 2),
      retryable: true,
      code: 'CONCURRENCY_CONFLICT',
    },
    { name: 'query timeout', error: new QueryTimeoutError('t'), retryable: true, code: 'QUERY_TIMEOUT' },
    {
      name: 'permanent handler error',
      error: new PermanentHandlerError('NO_SUBNET', 'x'),
      retryable: false,
      code: 'NO_SUBNET',
    },
    {
      name: 'undecodable',
      error: new UndecodableMessageError('x'),
      retryable: false,
      code: 'UNDECODABLE_MESSAGE',
    },
    {
      name: 'contract violation',
      error: new InvalidMessageError('t', []),
      retryable: false,
      code: 'INVALID_MESSAGE',
    },
    { name: 'domain error', error: new DomainError('LIMIT', 'x'), retryable: false, code: 'LIMIT' },
    {
      name: 'unknown fault (e.g. a dropped connection)',
      error: new Error('ECONNRESET'),
      retryable: true,
      code: 'Error',
    },
    { name: 'a thrown string', error: 'oops', retryable: true, code: 'UNKNOWN' },
  ])('$name → retryable $retryable, code $code', ({ error, retryable, code }) => {
    expect(isRetryable(error)).toBe(retryable);
    expect(errorCode(error)).toBe(code);
  });
});

describe('subjectMatcher (NATS wildcard semantics)', () => {
  const match = subjectMatcher(['a.b.c', 'x.*.z', 'p.>']);
  it.each([
    ['a.b.c', true],
    ['a.b', false],
    ['a.b.c.d', false],
    ['x.y.z', true],
    ['x.y.y.z', false],
    ['p.q', true],
    ['p.q.r.s', true],
    ['p', false],
    ['q.b.c', false],
  ])('%s → %s', (subject, expected) => {
    expect(match(subject)).toBe(expected);
  });
});

describe('streamConfig', () => {
  it('namespaces the stream and converts durations to nanoseconds', () => {
    const def = defineStream({
      name: 'JOBS',
      subjects: ['jobs.>'],
      description: 'd',
      maxAgeMs: 1000,
      duplicateWindowMs: 500,
      replicas: 3,
    });
    expect(streamConfig(def, 't_x')).toMatchObject({
      name: 't_x_JOBS',
      subjects: ['t_x.jobs.>'],
      max_age: 1_000_000_000,
      duplicate_window: 500_000_000,
      num_replicas: 3,
    });
    expect(streamConfig(def)).toMatchObject({ name: 'JOBS', subjects: ['jobs.>'] });
  });
});

describe('assertSchemaName', () => {
  it.each(['gpunet', 'scheduler_1', '_x'])('accepts %s', (name) => expect(assertSchemaName(name)).toBe(name));
  it.each(['', 'Upper', 'a-b', 'a"; DROP SCHEMA x; --', 'x'.repeat(64), '1abc'])('refuses %j', (name) => {
    expect(() => assertSchemaName(name)).toThrow(/must match/);
  });
});

describe('isTransientInfrastructureError', () => {
  const pgError = (code: string) => Object.assign(new Error('pg'), { code });
  it.each([
    { name: 'connection failure (08006)', error: pgError('08006'), transient: true },
    { name: 'admin shutdown (57P01)', error: pgError('57P01'), transient: true },
    { name: 'serialization failure (40001)', error: pgError('40001'), transient: true },
    { name: 'deadlock (40P01)', error: pgError('40P01'), transient: true },
    { name: 'too many connections (53300)', error: pgError('53300'), transient: true },
    { name: 'ECONNREFUSED', error: pgError('ECONNREFUSED'), transient: true },
    {
      name: 'wrapped by TypeORM (driverError)',
      error: Object.assign(new Error('QueryFailedError'), { driverError: pgError('08001') }),
      transient: true,
    },
    { name: 'as a cause', error: new Error('outer', { cause: pgError('ECONNRESET') }), transient: true },
    {
      name: 'unique violation (23505): the data, not the database',
      error: pgError('23505'),
      transient: false,
    },
    { name: 'syntax error (42601)', error: pgError('42601'), transient: false },
    { name: 'a plain handler error', error: new Error('boom'), transient: false },
  ])('$name → $transient', ({ error, transient }) => {
    expect(isTransientInfrastructureError(error)).toBe(transient);
  });
});
