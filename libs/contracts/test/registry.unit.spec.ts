import { describe, expect, it } from 'vitest';
import {
  buildEnvelope,
  catalog,
  catalogUpcasters,
  JobSubmittedV1,
  causedBy,
  createRegistry,
  InvalidMessageError,
  InvalidSubjectTokenError,
  isInvalidMessage,
  isUnknownMessageType,
  MessageDeadLettered,
  RankStatusReportedV1,
  RegistryDefinitionError,
  UnsignedReportError,
  type ValidationIssue,
} from '../src';
import { StartRank, WidgetCreatedV1, WidgetCreatedV2, WidgetV1ToV2 } from './fixtures';

const registry = createRegistry([WidgetCreatedV1, WidgetCreatedV2, StartRank], [WidgetV1ToV2]);
const meta = {
  eventId: '0192d3a4-5b6c-7d8e-9f00-112233445566',
  type: 'widget.created',
  version: 1,
  streamId: 'widget-1',
  streamVersion: 1,
  occurredAt: '2026-11-29T12:00:00.000Z',
  correlationId: 'c-1',
  causationId: null,
};

const issuesOf = (fn: () => unknown): readonly ValidationIssue[] => {
  try {
    fn();
  } catch (e) {
    if (isInvalidMessage(e)) return e.issues;
    throw e;
  }
  throw new Error('expected InvalidMessageError');
};

describe('MessageRegistry.parse', () => {
  it('accepts a valid message and upcasts v1 to the newest version', () => {
    const env = registry.parse({ ...meta, data: { name: 'w', gpus: [{ uuid: 'GPU-1' }] } });
    expect(env.version).toBe(2);
    expect(env.data).toEqual({ name: 'w', owner: 'unknown', gpus: [{ uuid: 'GPU-1' }] });
  });

  it('names the path of every bad field in the payload', () => {
    const issues = issuesOf(() =>
      registry.parse({ ...meta, data: { name: '', gpus: [{ uuid: 'x' }], extra: 1 } }),
    );
    expect(issues.map((i) => i.path).sort()).toEqual(['data', 'data.gpus[0].uuid', 'data.name']);
    expect(issues.find((i) => i.path === 'data')?.message).toMatch(/extra/);
  });

  it('names bad envelope fields', () => {
    const issues = issuesOf(() =>
      registry.parse({
        ...meta,
        eventId: 'not-a-uuid',
        streamVersion: -1,
        occurredAt: 'yesterday',
        data: {},
      }),
    );
    expect(issues.map((i) => i.path).sort()).toEqual(['eventId', 'occurredAt', 'streamVersion']);
  });

  it('rejects an unknown type or version with a typed error', () => {
    const attempt = (type: string, version: number) => {
      try {
        registry.parse({ ...meta, type, version, data: {} });
      } catch (e) {
        return e;
      }
      return undefined;
    };
    expect(isUnknownMessageType(attempt('widget.deleted', 1))).toBe(true);
    expect(isUnknownMessageType(attempt('widget.created', 3))).toBe(true);
  });

  it.each([null, 42, 'text', [], { data: {} }])(
    'rejects a non-envelope %j without throwing anything else',
    (raw) => {
      expect(() => registry.parse(raw)).toThrow(InvalidMessageError);
    },
  );
});

describe('registry definition rules', () => {
  it('refuses a type defined twice', () => {
    expect(() => createRegistry([WidgetCreatedV1, WidgetCreatedV1])).toThrow(RegistryDefinitionError);
  });
  it('skips an upcaster of a type it does not hold; refuses one that names only one of its versions', () => {
    expect(() => createRegistry([StartRank], [WidgetV1ToV2])).not.toThrow();
    expect(() => createRegistry([WidgetCreatedV2], [WidgetV1ToV2])).toThrow(/names unregistered versions/);
  });
  it('refuses an old version without an upcaster', () => {
    expect(() => createRegistry([WidgetCreatedV1, WidgetCreatedV2])).toThrow(/no upcaster/);
  });
  it('the production catalog builds into a registry, with its upcasters', () => {
    expect(() => createRegistry(catalog)).toThrow(/job.submitted v1 has no upcaster to v2/);
    const registry = createRegistry(catalog, catalogUpcasters);
    expect(registry.has(MessageDeadLettered.type, 1)).toBe(true);
    const v1 = buildEnvelope(
      JobSubmittedV1,
      {
        jobId: 'j1',
        tenantId: 't1',
        subnetId: 's1',
        asset: 'NTX',
        gpus: 2,
        maxPricePerGpuHour: '100',
        maxDurationSeconds: 60,
        submittedAt: '2026-11-29T00:00:00.000Z',
      },
      { streamId: 'job-j1' },
    );
    const read = registry.parse(JSON.parse(JSON.stringify(v1)));
    expect(read.version).toBe(2);
    expect(read.data).toMatchObject({ jobId: 'j1', gpuClasses: [], spec: null });
  });
  it('refuses an unsigned rank status (v1) instead of reading it as a signed one', () => {
    const registry = createRegistry(catalog, catalogUpcasters);
    const v1 = buildEnvelope(
      RankStatusReportedV1,
      {
        edgeId: `U${'A'.repeat(55)}`,
        jobId: 'j1',
        attempt: 1,
        rank: 0,
        state: 'running',
        startedAt: '2026-11-29T00:00:00.000Z',
        exitedAt: null,
        exitCode: null,
        signal: null,
        stopReason: null,
        wallSeconds: 3600,
        reportedAt: '2026-11-29T00:00:01.000Z',
      },
      { streamId: 'rank-j1' },
    );
    const read = () => registry.parse(JSON.parse(JSON.stringify(v1)));
    expect(read).toThrow(UnsignedReportError);
    expect(read).toThrow(/edge.rank-status v1 from UA+ is unsigned/);
  });
});

describe('buildEnvelope', () => {
  it('validates the payload and fills metadata', () => {
    const env = buildEnvelope(
      WidgetCreatedV2,
      { name: 'a', owner: 'o', gpus: [] },
      { streamId: 'w-1', streamVersion: 3 },
    );
    expect(env.type).toBe('widget.created');
    expect(env.correlationId).toBe(env.eventId);
    expect(registry.parse(env)).toEqual(env);
    const child = buildEnvelope(
      WidgetCreatedV2,
      { name: 'b', owner: 'o', gpus: [] },
      { streamId: 'w-2', ...causedBy(env) },
    );
    expect(child.causationId).toBe(env.eventId);
    expect(child.correlationId).toBe(env.correlationId);
  });
  it('rejects a payload that type-checks but breaks the schema, with the path', () => {
    expect(
      issuesOf(() =>
        buildEnvelope(WidgetCreatedV2, { name: 'x'.repeat(21), owner: 'o', gpus: [] }, { streamId: 's' }),
      ),
    ).toEqual([{ path: 'data.name', message: expect.stringMatching(/20/) }]);
  });
});

describe('subjects', () => {
  it('renders tokens and prefixes', () => {
    expect(StartRank.subject({ edgeId: 'edge-7' })).toBe('cmd.edge.edge-7.start-rank.v1');
    expect(StartRank.subject({ edgeId: 'edge-7' }, 't123')).toBe('t123.cmd.edge.edge-7.start-rank.v1');
    expect(StartRank.filter()).toBe('cmd.edge.*.start-rank.v1');
  });
  it.each(['a.b', '*', '>', 'a b', '', 'x'.repeat(129)])(
    'refuses the token %j, which would change the subject',
    (edgeId) => {
      expect(() => StartRank.subject({ edgeId })).toThrow(InvalidSubjectTokenError);
    },
  );
});
