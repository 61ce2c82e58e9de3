import type { z } from 'zod';
import { prefixSubject, renderSubject, type SubjectParams, wildcardSubject } from './subject';

export type MessageKind = 'event' | 'command';

/**
 * One message, defined once: its subject, type name, version and runtime schema. The payload type is
 * inferred from the schema, so the type and the validator can never disagree.
 */
export interface MessageDefinition<
  K extends MessageKind = MessageKind,
  T extends string = string,
  V extends number = number,
  S extends z.ZodType = z.ZodType,
  Subj extends string = string,
> {
  readonly kind: K;
  readonly type: T;
  readonly version: V;
  readonly schema: S;
  /** Subject template; `{token}`s are filled per message (`cmd.edge.{edgeId}.start-rank.v1`). */
  readonly subjectTemplate: Subj;
  /** Name of the JetStream stream that stores it (see `defineStream`). */
  readonly stream: string;
  readonly description: string;
  /** The concrete subject for one message, with the namespace prefix. */
  subject(params: SubjectParams<Subj>, prefix?: string): string;
  /** A subject filter matching every message of this definition (tokens as `*`). */
  filter(prefix?: string): string;
}

/** The payload type of a definition. */
export type PayloadOf<D> =
  D extends MessageDefinition<MessageKind, string, number, infer S> ? z.output<S> : never;
/** The payload type a producer may pass (before defaults are applied). */
export type InputOf<D> =
  D extends MessageDefinition<MessageKind, string, number, infer S> ? z.input<S> : never;
export type TypeOf<D> = D extends MessageDefinition<MessageKind, infer T> ? T : never;

interface DefinitionInput<T extends string, V extends number, S extends z.ZodType, Subj extends string> {
  readonly type: T;
  readonly version: V;
  readonly schema: S;
  readonly subject: Subj;
  readonly stream: string;
  readonly description: string;
}

const define =
  <K extends MessageKind>(kind: K) =>
  <const T extends string, const V extends number, S extends z.ZodType, const Subj extends string>(
    input: DefinitionInput<T, V, S, Subj>,
  ): MessageDefinition<K, T, V, S, Subj> => {
    const expectedSuffix = `.v${input.version}`;
    if (!input.subject.endsWith(expectedSuffix)) {
      throw new Error(`subject ${input.subject} of ${input.type} must end with ${expectedSuffix}`);
    }
    if (kind === 'command' && !input.subject.startsWith('cmd.')) {
      throw new Error(`command subject ${input.subject} must start with cmd.`);
    }
    if (kind === 'event' && input.subject.startsWith('cmd.')) {
      throw new Error(`event subject ${input.subject} must not start with cmd.`);
    }
    return Object.freeze({
      kind,
      type: input.type,
      version: input.version,
      schema: input.schema,
      subjectTemplate: input.subject,
      stream: input.stream,
      description: input.description,
      subject: (params: SubjectParams<Subj>, prefix = '') =>
        prefixSubject(prefix, renderSubject(input.subject, params as Record<string, string> | void)),
      filter: (prefix = '') => prefixSubject(prefix, wildcardSubject(input.subject)),
    });
  };

/** Defines an event: something that happened, named in the past tense (`job.placed`). */
export const defineEvent = define('event');
/** Defines a command: a request to act, imperative, on a `cmd.` subject (`edge.start-rank`). */
export const defineCommand = define('command');
