import { namespacedStream, type StreamDefinition } from '@gpunet/contracts';
import {
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamManager,
  RetentionPolicy,
  StorageType,
  type StreamConfig,
} from '@nats-io/jetstream';

const ms = (millis: number): number => millis * 1_000_000;

/** The server configuration for one of our stream definitions inside a namespace. */
export const streamConfig = (
  def: StreamDefinition,
  prefix = '',
): Partial<StreamConfig> & { name: string } => {
  const { name, subjects } = namespacedStream(def, prefix);
  return {
    name,
    subjects,
    description: def.description,
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_age: ms(def.maxAgeMs ?? 7 * 24 * 3600 * 1000),
    duplicate_window: ms(def.duplicateWindowMs ?? 10 * 60 * 1000),
    num_replicas: def.replicas ?? 1,
    max_bytes: def.maxBytes ?? -1,
    max_msgs_per_subject: def.maxMsgsPerSubject ?? -1,
  };
};

/** Creates each stream, or updates it to the declared configuration. Idempotent; safe at every start. */
export const ensureStreams = async (
  jsm: JetStreamManager,
  defs: readonly StreamDefinition[],
  prefix = '',
): Promise<void> => {
  for (const def of defs) {
    const config = streamConfig(def, prefix);
    const exists = await jsm.streams.info(config.name).then(
      () => true,
      (error: unknown) => {
        if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound)
          return false;
        throw error;
      },
    );
    if (exists) await jsm.streams.update(config.name, config);
    else await jsm.streams.add(config);
  }
};
