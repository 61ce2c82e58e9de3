import { readFileSync } from 'node:fs';
import { toIssues, type ValidationIssue } from '@gpunet/contracts';
import type { ServiceConnection } from '@gpunet/eventing';
import { parseDurationMs } from '@gpunet/ensemble-spec';
import { z } from 'zod';

/** A service's environment is off: every issue names its variable. Thrown at start, never later. */
export class InvalidConfigError extends Error {
  override readonly name = 'InvalidConfigError';
  readonly code = 'INVALID_CONFIG' as const;
  constructor(
    service: string,
    readonly issues: readonly ValidationIssue[],
  ) {
    super(`invalid ${service} configuration: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
  }
}

/** A duration variable (`30s`, `5m`, `7d`, the ensemble spec's units) as milliseconds. */
export const envDuration = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      const d = parseDurationMs(text);
      if (!d.ok) {
        ctx.addIssue({ code: 'custom', message: d.reason });
        return z.NEVER;
      }
      return d.value;
    });

/**
 * The variables every event-sourced service reads: `DATABASE_URL`, `<SERVICE>_SCHEMA` (default the
 * service's name), `NATS_URL`, `NATS_NKEY_SEED_FILE`, `SUBJECT_PREFIX`. Spread into a service's schema.
 */
export const serviceEnvShape = <S extends string>(service: S) =>
  ({
    DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL'),
    [`${service.toUpperCase()}_SCHEMA`]: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/)
      .default(service),
    NATS_URL: z
      .string()
      .regex(/^(nats|tls):\/\//, 'must be a nats:// URL')
      .default('nats://127.0.0.1:4222'),
    NATS_NKEY_SEED_FILE: z.string().optional(),
    SUBJECT_PREFIX: z
      .string()
      .regex(/^([A-Za-z0-9_-]+)?$/)
      .default(''),
  }) as {
    DATABASE_URL: z.ZodString;
    NATS_URL: z.ZodDefault<z.ZodString>;
    NATS_NKEY_SEED_FILE: z.ZodOptional<z.ZodString>;
    SUBJECT_PREFIX: z.ZodDefault<z.ZodString>;
  } & { [K in `${Uppercase<S>}_SCHEMA`]: z.ZodDefault<z.ZodString> };

/** Parses the environment with `schema`, or throws `InvalidConfigError` naming every bad variable. */
export const parseServiceEnv = <T extends z.ZodType>(
  service: string,
  schema: T,
  env: Readonly<Record<string, string | undefined>>,
): z.output<T> => {
  const parsed = schema.safeParse(env);
  if (!parsed.success) throw new InvalidConfigError(service, toIssues(parsed.error));
  return parsed.data;
};

/** The service's NATS nkey seed from `NATS_NKEY_SEED_FILE`; null when unset (development server). */
export const readNatsSeed = (service: string, path: string | undefined): string | null => {
  if (path === undefined) return null;
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (error) {
    throw new InvalidConfigError(service, [
      { path: 'NATS_NKEY_SEED_FILE', message: `cannot read: ${String(error)}` },
    ]);
  }
};

/** The variables of `serviceEnvShape` once parsed. */
export interface ServiceEnv {
  readonly DATABASE_URL: string;
  readonly NATS_URL: string;
  readonly NATS_NKEY_SEED_FILE?: string | undefined;
  readonly SUBJECT_PREFIX: string;
}

/**
 * Where the service's state and messages live, from its parsed environment (`serviceEnvShape`):
 * the database, its own schema (`<SERVICE>_SCHEMA`), NATS with its seed (read from
 * `NATS_NKEY_SEED_FILE`) and the namespace prefix. Spread into the service's configuration.
 */
export const serviceConnectionOf = (service: string, e: ServiceEnv): ServiceConnection => {
  const schema = (e as unknown as Record<string, unknown>)[`${service.toUpperCase()}_SCHEMA`];
  if (typeof schema !== 'string')
    throw new InvalidConfigError(service, [
      {
        path: `${service.toUpperCase()}_SCHEMA`,
        message: 'missing: parse the environment with serviceEnvShape',
      },
    ]);
  return {
    databaseUrl: e.DATABASE_URL,
    schema,
    natsUrl: e.NATS_URL,
    natsSeed: readNatsSeed(service, e.NATS_NKEY_SEED_FILE),
    prefix: e.SUBJECT_PREFIX,
  };
};
