import { UsageError } from '../command';
import type { CliIo } from '../io';
import { GatewayClient } from './client';
import { resolveTarget } from './config';

/** The client of the gateway the user logged in to (or `GPUNET_GATEWAY` / `GPUNET_API_KEY`). */
export const connect = async (io: CliIo): Promise<GatewayClient> =>
  new GatewayClient(await resolveTarget(io), io);

/** `--json` output: one document, pretty-printed. */
export const printJson = (io: CliIo, value: unknown): void => io.out(`${JSON.stringify(value, null, 2)}\n`);

/** Shared help text: exit codes of every command that talks to the gateway. */
export const API_EXIT_CODES = [
  'Exit status: 0 ok, 1 the gateway refused the request (problem printed) or the job did not complete,',
  '  2 bad command line, 3 not logged in / bad or revoked key / missing scope, 4 not found,',
  '  5 the gateway is unreachable.',
];

/** An integer option within bounds, or a usage error naming it. */
export const intOption = (
  name: string,
  value: string | undefined,
  min: number,
  max: number,
): number | undefined => {
  if (value === undefined) return undefined;
  const n = /^[0-9]{1,15}$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= min && n <= max)) throw new UsageError(`--${name} must be an integer from ${min} to ${max}`);
  return n;
};

/** An amount in minor units (an integer string, as the API takes money), or a usage error. */
export const minorOption = (name: string, value: string | undefined): string => {
  if (value === undefined) throw new UsageError(`--${name} is required`);
  if (!/^(0|[1-9][0-9]{0,37})$/.test(value))
    throw new UsageError(`--${name} must be an amount in minor units (an integer, e.g. 2500000 for 2.5 NTX)`);
  return value;
};
