export { type Clock, systemClock } from '@gpunet/contracts';
export { type DateInput, FAKE_CLOCK_EPOCH, FakeClock, type FakeTimerId } from './clock/fake-clock';
export { type SeededRandom, seededRandom } from './random/seeded-random';
export { type CollectorWaitOptions, EventCollector } from './await/event-collector';
export { eventually, waitFor, type WaitOptions } from './await/wait-for';
export { isWaitTimeout, WaitTimeoutError } from './await/wait-timeout.error';
export {
  DeciderGiven,
  DeciderWhen,
  type ErrorClass,
  type ExpectedError,
  given,
} from './decider/given-when-then';
export { MAX_NAMESPACE_LENGTH, testNamespace } from './namespace';
export { databaseUrl, natsUrl } from './infra/targets';
export { serviceConnection } from './infra/service-connection';
export {
  type PostgresTestSchema,
  redact,
  searchPathOptions,
  usePostgres,
  type UsePostgresOptions,
} from './infra/postgres';
export {
  belongsToNamespace,
  deleteNamespaceStreams,
  type NatsTestContext,
  useNats,
  type UseNatsOptions,
} from './infra/nats';
export {
  NatsServerExitedError,
  type NatsServerProcess,
  startNatsServer,
  type StartNatsServerOptions,
} from './infra/nats-server';
export {
  configureTestcontainers,
  dockerAvailable,
  DockerUnavailableError,
  type NatsContainer,
  type NatsContainerOptions,
  type PostgresContainer,
  type PostgresContainerOptions,
  requireDocker,
  startNatsContainer,
  startPostgresContainer,
} from './infra/containers';
