import * as semconv from '@opentelemetry/semantic-conventions/incubating';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { Attr, AttrValue, type SpanAttributes } from '../src';

describe('Attr registry', () => {
  it.each([
    ['messagingSystem', semconv.ATTR_MESSAGING_SYSTEM_NAME],
    ['messagingDestination', semconv.ATTR_MESSAGING_DESTINATION_NAME],
    ['messagingMessageId', semconv.ATTR_MESSAGING_MESSAGE_ID],
    ['messagingOperationType', semconv.ATTR_MESSAGING_OPERATION_TYPE],
    ['messagingOperationName', semconv.ATTR_MESSAGING_OPERATION_NAME],
    ['messagingConversationId', semconv.ATTR_MESSAGING_MESSAGE_CONVERSATION_ID],
    ['messagingBodySize', semconv.ATTR_MESSAGING_MESSAGE_BODY_SIZE],
    ['consumer', semconv.ATTR_MESSAGING_CONSUMER_GROUP_NAME],
  ] as const)('copies the incubating convention %s = %s exactly', (key, upstream) => {
    expect(Attr[key]).toBe(upstream);
  });

  it('uses the conventions’ operation-type and database-system values', () => {
    expect(AttrValue.operationType).toEqual({
      send: semconv.MESSAGING_OPERATION_TYPE_VALUE_SEND,
      receive: semconv.MESSAGING_OPERATION_TYPE_VALUE_RECEIVE,
      process: semconv.MESSAGING_OPERATION_TYPE_VALUE_PROCESS,
      settle: semconv.MESSAGING_OPERATION_TYPE_VALUE_SETTLE,
    });
    expect(AttrValue.dbSystemPostgres).toBe(semconv.DB_SYSTEM_NAME_VALUE_POSTGRESQL);
  });

  it('never registers one name under two keys', () => {
    const names = Object.values(Attr);
    expect(new Set(names).size).toBe(names.length);
  });

  it('puts every name that is not a convention under gpunet. in lower dotted snake case', () => {
    const conventionPrefixes = ['service.', 'messaging.', 'error.', 'http.', 'url.', 'db.'];
    for (const name of Object.values(Attr)) {
      expect(name).toMatch(/^[a-z]+(\.[a-z_]+)+$/);
      if (!conventionPrefixes.some((p) => name.startsWith(p))) expect(name).toMatch(/^gpunet\./);
    }
  });

  it('accepts registered names only, at the type level', () => {
    expectTypeOf<{ [Attr.jobId]: string }>().toExtend<SpanAttributes>();
    // @ts-expect-error an unregistered attribute name is not a SpanAttributes key
    const bad: SpanAttributes = { 'gpunet.unregistered': 1 };
    expect(bad).toBeDefined();
  });
});
