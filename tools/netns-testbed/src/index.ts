export { CommandFailedError, run, type RunOptions, type RunResult } from './command';
export {
  buildInternet,
  type Internet,
  type InternetSpec,
  type NatKind,
  type NatRouter,
  PUBLIC_SUBNET,
  type SiteSpec,
  type TestHost,
} from './internet';
export { Netns } from './netns';
export { type ProcessExit, ProcessOutputTimeoutError, TestProcess } from './process';
export { requireTestbed, TestbedUnavailableError } from './require';
export { listNamespaces, sweepStaleTestbeds, Testbed, TESTBED_PREFIX } from './testbed';
export { Wan, type WanCounters, WanControlError, type WanDirectionCounters } from './wan';
export {
  type LinkProfile,
  validateLinkProfile,
  validateWanSpec,
  type WanPair,
  WanProfileError,
  type WanSpec,
} from './wan-profile';
export { glooAllReduceArgv, probeScript, REPO_ROOT, tsxArgv, tsxEnv } from './scripts';
