export { NestPinoLogger } from './nest-logger';
export {
  type HttpServing,
  runService,
  type RunningService,
  type RunServiceOptions,
  SERVICE_CONTEXT,
  type ServiceContext,
} from './run-service';
export {
  envDuration,
  InvalidConfigError,
  parseServiceEnv,
  readNatsSeed,
  serviceConnectionOf,
  type ServiceEnv,
  serviceEnvShape,
} from './config';
