import { parseCommandArgs } from '../../args';
import { type Command, ExitCode, UsageError } from '../../command';
import { GatewayClient } from '../../api/client';
import { configPath, parseApiKeyValue, parseGatewayUrl, writeConfig } from '../../api/config';
import { printJson } from '../../api/session';

export const loginCommand: Command = {
  name: 'login',
  summary: 'save the gateway URL and API key for the other commands',
  help: [
    'Usage: gpunet login --gateway URL (--key KEY | --key-file FILE) [--no-verify] [--json]',
    '',
    'Checks the key against the gateway (a read of the job list), then writes both to the config file:',
    '$GPUNET_CONFIG, else $XDG_CONFIG_HOME/gpunet/config.json or ~/.config/gpunet/config.json, readable by',
    'you only (0600). The key is never printed. GPUNET_GATEWAY and GPUNET_API_KEY override the file in',
    'every command (and stand in for --gateway/--key here).',
    '',
    'Options:',
    '  --gateway URL     the gateway, e.g. https://gateway.example.com or http://127.0.0.1:8080',
    '  --key KEY         the API key gpn_<id>_<secret> (an admin issues it); it lands in your shell',
    '                    history, so prefer --key-file or GPUNET_API_KEY',
    '  --key-file FILE   read the key from FILE',
    '  --no-verify       save without asking the gateway',
    '',
    'Exit status: 0 saved, 2 bad command line, 3 the gateway refused the key, 5 the gateway is unreachable.',
    '',
  ].join('\n'),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      gateway: { type: 'string' },
      key: { type: 'string' },
      'key-file': { type: 'string' },
      'no-verify': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    });
    if (positionals.length > 0) throw new UsageError('takes no arguments');
    const rawGateway = values.gateway ?? io.env['GPUNET_GATEWAY'];
    if (rawGateway === undefined) throw new UsageError('--gateway URL is required');
    const gateway = parseGatewayUrl(rawGateway);
    if (values.key !== undefined && values['key-file'] !== undefined)
      throw new UsageError('give --key or --key-file, not both');
    let rawKey = values.key;
    let from = '--key';
    if (values['key-file'] !== undefined) {
      from = '--key-file';
      try {
        rawKey = await io.readFile(values['key-file']);
      } catch {
        throw new UsageError(`--key-file: cannot read ${values['key-file']}`);
      }
    }
    if (rawKey === undefined && io.env['GPUNET_API_KEY'] !== undefined) {
      rawKey = io.env['GPUNET_API_KEY'];
      from = 'GPUNET_API_KEY';
    }
    if (rawKey === undefined) throw new UsageError('--key KEY or --key-file FILE is required');
    const apiKey = parseApiKeyValue(rawKey, from);
    const target = { gateway, apiKey };
    if (!values['no-verify'])
      await new GatewayClient(target, io, 15_000).json('GET', '/v1/jobs', 'JobList', {
        query: { limit: 1 },
      });
    const path = await writeConfig(io, target);
    const keyId = apiKey.split('_')[1];
    if (values.json) printJson(io, { gateway, keyId, config: path, verified: !values['no-verify'] });
    else io.out(`logged in to ${gateway} with key ${keyId}; saved to ${path}\n`);
    return ExitCode.Ok;
  },
};

export const logoutCommand: Command = {
  name: 'logout',
  summary: 'forget the saved gateway and API key',
  help: [
    'Usage: gpunet logout',
    '',
    'Removes the config file `gpunet login` wrote (the key stays valid on the gateway).',
    '',
  ].join('\n'),
  async run(args, io) {
    const { positionals } = parseCommandArgs(args, {});
    if (positionals.length > 0) throw new UsageError('takes no arguments');
    const path = configPath(io.env);
    io.out((await io.removeFile(path)) ? `removed ${path}\n` : `not logged in (no ${path})\n`);
    return ExitCode.Ok;
  },
};
