import { describe, expect, it } from 'vitest';
import { MAX_NAMESPACE_LENGTH, testNamespace } from '../src';

// Valid everywhere at once: a NATS subject token, a JetStream stream name, an unquoted Postgres identifier.
const VALID = /^[a-z][a-z0-9_]*$/;

describe('testNamespace', () => {
  it.each([
    ['plain label', 'outbox', /^t_outbox_[a-z0-9]{10}$/],
    ['mixed case and punctuation', 'Event-Store.v2 spec!', /^t_event_store_v2_spec_[a-z0-9]{10}$/],
    ['nothing usable', '...', /^t_[a-z0-9]{10}$/],
    ['empty', '', /^t_[a-z0-9]{10}$/],
  ])('%s', (_case, label, expected) => {
    const ns = testNamespace(label);
    expect(ns).toMatch(expected);
    expect(ns).toMatch(VALID);
  });

  it(`cuts long labels so the name stays within ${MAX_NAMESPACE_LENGTH} characters`, () => {
    const ns = testNamespace('a-very-long-label-that-describes-the-suite-in-far-too-much-detail');
    expect(ns.length).toBeLessThanOrEqual(MAX_NAMESPACE_LENGTH);
    expect(ns).toMatch(VALID);
    expect(ns).not.toMatch(/__/);
  });

  it('never repeats', () => {
    const names = new Set(Array.from({ length: 5_000 }, () => testNamespace('same')));
    expect(names.size).toBe(5_000);
  });
});
