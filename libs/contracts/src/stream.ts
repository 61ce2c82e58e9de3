import { prefixSubject } from './subject';

/** A JetStream stream as gpunet declares it; `libs/eventing` turns it into a server config. */
export interface StreamDefinition {
  /** Stream name (upper case by convention). Tests prefix it per suite. */
  readonly name: string;
  /** Subject filters the stream stores, without the namespace prefix. */
  readonly subjects: readonly string[];
  readonly description: string;
  /** How long messages are kept, in ms. Default: 7 days. */
  readonly maxAgeMs?: number;
  /**
   * Window in which the server drops a second message with the same `Nats-Msg-Id`, in ms. It bounds
   * how long after a publish a retried publish (relay restart, NATS outage) is still de-duplicated;
   * consumers also de-duplicate by event id, so a later duplicate is harmless. Default: 10 minutes.
   */
  readonly duplicateWindowMs?: number;
  /** Replicas in a JetStream cluster; production uses 3. Default: 1. */
  readonly replicas?: number;
  /** Bytes the stream keeps at most (oldest discarded first). Default: unlimited. */
  readonly maxBytes?: number;
  /** Messages kept per subject at most (oldest discarded first). Default: unlimited. */
  readonly maxMsgsPerSubject?: number;
}

export const defineStream = (def: StreamDefinition): StreamDefinition => Object.freeze({ ...def });

/** The stream's name and subjects inside a namespace (tests: a unique prefix; production: empty). */
export const namespacedStream = (
  def: StreamDefinition,
  prefix: string,
): { name: string; subjects: string[] } => ({
  name: prefix === '' ? def.name : `${prefix.replace(/[^A-Za-z0-9_-]/g, '_')}_${def.name}`,
  subjects: def.subjects.map((s) => prefixSubject(prefix, s)),
});
