import type { z } from 'zod';
import { type Envelope, RawEnvelopeSchema } from './envelope';
import { InvalidMessageError, RegistryDefinitionError, UnknownMessageTypeError } from './errors';
import { toIssues } from './issues';
import type { MessageDefinition, MessageKind, PayloadOf, TypeOf } from './message';

/** A typed envelope for one definition. */
export type EnvelopeOf<D> = D extends MessageDefinition ? Envelope<TypeOf<D>, PayloadOf<D>> : never;

/** Turns a payload of an older version into the next version's payload. Pure. */
export interface Upcaster<
  From extends MessageDefinition = MessageDefinition,
  To extends MessageDefinition = MessageDefinition,
> {
  readonly from: From;
  readonly to: To;
  readonly upcast: (data: PayloadOf<From>) => z.input<To['schema']>;
}

export const defineUpcaster = <From extends MessageDefinition, To extends MessageDefinition>(
  u: Upcaster<From, To>,
): Upcaster<From, To> => {
  if (u.from.type !== u.to.type || u.to.version !== u.from.version + 1) {
    throw new RegistryDefinitionError(
      `an upcaster goes from ${u.from.type} vN to vN+1, not ${u.from.type} v${u.from.version} → ${u.to.type} v${u.to.version}`,
    );
  }
  return u;
};

const key = (type: string, version: number): string => `${type}@${version}`;

/**
 * The set of messages a process understands. Old versions stay registered (a published version
 * never changes shape) and are upcast to the newest version on read.
 */
export class MessageRegistry<D extends MessageDefinition = MessageDefinition> {
  private readonly byKey = new Map<string, MessageDefinition>();
  private readonly latest = new Map<string, MessageDefinition>();
  private readonly upcasters = new Map<string, Upcaster>();

  constructor(definitions: readonly D[], upcasters: readonly Upcaster[] = []) {
    for (const def of definitions) {
      const k = key(def.type, def.version);
      if (this.byKey.has(k))
        throw new RegistryDefinitionError(`${def.type} v${def.version} is defined twice`);
      this.byKey.set(k, def);
      const current = this.latest.get(def.type);
      if (current === undefined || current.version < def.version) this.latest.set(def.type, def);
    }
    for (const u of upcasters) {
      const from = this.byKey.has(key(u.from.type, u.from.version));
      const to = this.byKey.has(key(u.to.type, u.to.version));
      // A shared list of upcasters (the catalog's) may name types this registry does not hold.
      if (!from && !to) continue;
      if (!from || !to) {
        throw new RegistryDefinitionError(
          `upcaster ${u.from.type} v${u.from.version} names unregistered versions`,
        );
      }
      this.upcasters.set(key(u.from.type, u.from.version), u);
    }
    for (const [type, newest] of this.latest) {
      for (let v = 1; v < newest.version; v++) {
        if (this.byKey.has(key(type, v)) && !this.upcasters.has(key(type, v))) {
          throw new RegistryDefinitionError(`${type} v${v} has no upcaster to v${v + 1}`);
        }
      }
    }
  }

  get definitions(): readonly D[] {
    return [...this.byKey.values()] as D[];
  }

  has(type: string, version?: number): boolean {
    return version === undefined ? this.latest.has(type) : this.byKey.has(key(type, version));
  }

  /** The definition of one type (newest version unless `version` is given). */
  get(type: string, version?: number): D {
    const def = version === undefined ? this.latest.get(type) : this.byKey.get(key(type, version));
    if (def === undefined) throw new UnknownMessageTypeError(type, version);
    return def as D;
  }

  ofKind(kind: MessageKind): D[] {
    return this.definitions.filter((d) => d.kind === kind);
  }

  /**
   * Validates an untrusted message (decoded JSON from the wire or the store) and upcasts it to the
   * newest version. Throws `InvalidMessageError` naming every bad field, or `UnknownMessageTypeError`.
   */
  parse(raw: unknown): EnvelopeOf<D> {
    const envelope = RawEnvelopeSchema.safeParse(raw);
    if (!envelope.success) {
      const type =
        typeof (raw as { type?: unknown } | null)?.type === 'string'
          ? (raw as { type: string }).type
          : 'message';
      throw new InvalidMessageError(type, toIssues(envelope.error));
    }
    const def = this.byKey.get(key(envelope.data.type, envelope.data.version));
    if (def === undefined) throw new UnknownMessageTypeError(envelope.data.type, envelope.data.version);
    let current = def;
    let data = this.validate(def, envelope.data.data);
    for (
      let u = this.upcasters.get(key(current.type, current.version));
      u;
      u = this.upcasters.get(key(current.type, current.version))
    ) {
      current = u.to;
      data = this.validate(current, u.upcast(data as never));
    }
    return { ...envelope.data, version: current.version, data } as EnvelopeOf<D>;
  }

  /** Validates a payload against its definition; returns the parsed payload (defaults applied). */
  validate<X extends MessageDefinition>(def: X, data: unknown): PayloadOf<X> {
    const result = def.schema.safeParse(data);
    if (!result.success)
      throw new InvalidMessageError(`${def.type} v${def.version}`, toIssues(result.error, ['data']));
    return result.data as PayloadOf<X>;
  }
}

export const createRegistry = <D extends MessageDefinition>(
  definitions: readonly D[],
  upcasters: readonly Upcaster[] = [],
): MessageRegistry<D> => new MessageRegistry(definitions, upcasters);
