import { describe, expect, it } from 'vitest';
import { belongsToNamespace, redact, searchPathOptions } from '../src';

describe('belongsToNamespace', () => {
  const prefix = 't_outbox_abcdefghij';
  it.each([
    ['its own stream', `${prefix}_EVENTS`, true],
    ['the prefix itself', prefix, true],
    ['its KV bucket', `KV_${prefix}_leases`, true],
    ['its object store', `OBJ_${prefix}_blobs`, true],
    ['another suite', 't_outbox_zzzzzzzzzz_EVENTS', false],
    ['production', 'EVENTS', false],
    ['a KV bucket of another suite', 'KV_t_outbox_zzzzzzzzzz', false],
  ])('%s', (_case, stream, expected) => {
    expect(belongsToNamespace(stream, prefix)).toBe(expected);
  });
});

describe('postgres helpers', () => {
  it('sets search_path through libpq options', () => {
    expect(searchPathOptions('t_x_1234567890')).toBe('-c search_path=t_x_1234567890');
  });

  it('redacts passwords in connection strings', () => {
    expect(redact('postgres://test:secret@127.0.0.1:5432/test')).toBe(
      'postgres://test:***@127.0.0.1:5432/test',
    );
    expect(redact('postgres://postgres@127.0.0.1:5432/test')).toBe('postgres://postgres@127.0.0.1:5432/test');
    expect(redact('::nonsense')).toBe('(unparsable connection string)');
  });
});
