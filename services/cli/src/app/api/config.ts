import { z } from 'zod';
import { ExitCode } from '../command';
import type { CliIo } from '../io';
import { CliError } from './errors';

/** Where `gpunet login` keeps the gateway and API key: `$GPUNET_CONFIG`, else the XDG config dir. */
export const configPath = (env: CliIo['env']): string => {
  if (env['GPUNET_CONFIG']) return env['GPUNET_CONFIG'];
  const base = env['XDG_CONFIG_HOME'] || `${env['HOME'] ?? '.'}/.config`;
  return `${base}/gpunet/config.json`;
};

/** `gpn_<12 id chars>_<secret>`, as the gateway issues keys. */
export const API_KEY_PATTERN = /^gpn_[A-Za-z0-9]{12}_[A-Za-z0-9_-]{16,128}$/;

const GatewayUrl = z
  .string()
  .trim()
  .transform((s, ctx) => {
    try {
      const url = new URL(s);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('protocol');
      return url.toString().replace(/\/+$/, '');
    } catch {
      ctx.addIssue({ code: 'custom', message: `'${s}' is not an http:// or https:// URL` });
      return z.NEVER;
    }
  });
const ApiKey = z.string().trim().regex(API_KEY_PATTERN, 'is not a gpunet API key (gpn_<id>_<secret>)');

const ConfigFile = z.object({ gateway: GatewayUrl, apiKey: ApiKey });

/** The gateway and key every API command uses. */
export interface Target {
  readonly gateway: string;
  readonly apiKey: string;
}

export const parseGatewayUrl = (s: string): string => {
  const r = GatewayUrl.safeParse(s);
  if (!r.success) throw new CliError(ExitCode.Usage, `--gateway: ${r.error.issues[0]?.message ?? 'invalid'}`);
  return r.data;
};

export const parseApiKeyValue = (s: string, from: string): string => {
  const r = ApiKey.safeParse(s);
  // The key itself is never echoed, not even a wrong one: it may be a real secret mistyped.
  if (!r.success)
    throw new CliError(ExitCode.Usage, `${from}: the value is not a gpunet API key (gpn_<id>_<secret>)`);
  return r.data;
};

const readConfig = async (io: CliIo, path: string): Promise<Partial<Target>> => {
  let text: string;
  try {
    text = await io.readFile(path);
  } catch {
    return {};
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new CliError(ExitCode.Failed, `${path}: not JSON; run \`gpunet login\` again`);
  }
  const r = ConfigFile.safeParse(json);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new CliError(
      ExitCode.Failed,
      `${path}: ${issue?.path.join('.') || '(root)'} ${issue?.path[0] === 'apiKey' ? 'is not a gpunet API key' : (issue?.message ?? 'invalid')}; run \`gpunet login\` again`,
    );
  }
  return r.data;
};

/**
 * The gateway and key: `GPUNET_GATEWAY` / `GPUNET_API_KEY` override the config file. Neither: exit 3
 * with what to do.
 */
export const resolveTarget = async (io: CliIo): Promise<Target> => {
  const path = configPath(io.env);
  const file = await readConfig(io, path);
  const gateway = io.env['GPUNET_GATEWAY'] ? parseGatewayUrl(io.env['GPUNET_GATEWAY']) : file.gateway;
  const apiKey = io.env['GPUNET_API_KEY']
    ? parseApiKeyValue(io.env['GPUNET_API_KEY'], 'GPUNET_API_KEY')
    : file.apiKey;
  if (gateway === undefined || apiKey === undefined)
    throw new CliError(
      ExitCode.Auth,
      `not logged in: run \`gpunet login --gateway URL --key KEY\` (or set GPUNET_GATEWAY and GPUNET_API_KEY); no ${gateway === undefined ? 'gateway' : 'API key'} in ${path}`,
    );
  return { gateway, apiKey };
};

export const writeConfig = async (io: CliIo, target: Target): Promise<string> => {
  const path = configPath(io.env);
  await io.writePrivateFile(
    path,
    `${JSON.stringify({ gateway: target.gateway, apiKey: target.apiKey }, null, 2)}\n`,
  );
  return path;
};
