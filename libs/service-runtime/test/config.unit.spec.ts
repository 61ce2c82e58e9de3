import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  envDuration,
  InvalidConfigError,
  parseServiceEnv,
  readNatsSeed,
  serviceConnectionOf,
  serviceEnvShape,
} from '../src';

const Schema = z.object({ ...serviceEnvShape('probe'), WINDOW: envDuration('30s') });

describe('service configuration helpers', () => {
  it('applies the common defaults and parses durations', () => {
    const e = parseServiceEnv('probe', Schema, { DATABASE_URL: 'postgres://x@h/db', WINDOW: '2m' });
    expect(e).toMatchObject({
      PROBE_SCHEMA: 'probe',
      NATS_URL: 'nats://127.0.0.1:4222',
      SUBJECT_PREFIX: '',
      WINDOW: 120_000,
    });
  });

  it('gives the service its connection: database, its own schema, NATS, seed, namespace', () => {
    const e = parseServiceEnv('probe', Schema, {
      DATABASE_URL: 'postgres://x@h/db',
      PROBE_SCHEMA: 'probe_2',
      NATS_URL: 'nats://n:4222',
      SUBJECT_PREFIX: 't1',
    });
    expect(serviceConnectionOf('probe', e)).toEqual({
      databaseUrl: 'postgres://x@h/db',
      schema: 'probe_2',
      natsUrl: 'nats://n:4222',
      natsSeed: null,
      prefix: 't1',
    });
    // Parsed for another service: its schema variable is not there, and that is said.
    expect(() => serviceConnectionOf('other', e)).toThrow(/OTHER_SCHEMA/);
  });

  it('names every bad variable at once', () => {
    try {
      parseServiceEnv('probe', Schema, {
        DATABASE_URL: 'mysql://x',
        PROBE_SCHEMA: 'Bad-Name',
        WINDOW: 'soon',
      });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidConfigError);
      expect((error as InvalidConfigError).issues.map((i) => i.path).sort()).toEqual([
        'DATABASE_URL',
        'PROBE_SCHEMA',
        'WINDOW',
      ]);
      expect((error as Error).message).toMatch(/^invalid probe configuration: /);
    }
  });

  it('reads no seed when unset, and names the variable when the file is missing', () => {
    expect(readNatsSeed('probe', undefined)).toBeNull();
    expect(() => readNatsSeed('probe', '/nonexistent/seed')).toThrow(/NATS_NKEY_SEED_FILE: cannot read/);
  });
});
