import { parse as parseYaml } from 'yaml';
import { parseCommandArgs } from '../../args';
import { type Command, type CommandGroup, ExitCode, UsageError } from '../../command';
import { money, table } from '../../api/format';
import { API_EXIT_CODES, connect, minorOption, printJson } from '../../api/session';
import type { CliIo } from '../../io';

const SUBNET_ID = /^[A-Za-z0-9_-]{1,128}$/;
const ASSET = /^[A-Z][A-Z0-9]{1,11}$/;

const oneSubnetId = (positionals: readonly string[]): string => {
  if (positionals.length !== 1) throw new UsageError('name exactly one subnet id');
  const id = positionals[0]!;
  if (!SUBNET_ID.test(id)) throw new UsageError(`'${id}' is not a subnet id (1–128 of A–Z a–z 0–9 _ -)`);
  return id;
};

const help = (usage: string, text: string[], options: string[]) =>
  [
    `Usage: gpunet subnet ${usage}`,
    '',
    ...text,
    '',
    'Options:',
    ...options,
    '  --json   machine-readable output',
    '',
    ...API_EXIT_CODES,
    '',
  ].join('\n');

const readParameters = async (io: CliIo, file: string): Promise<unknown> => {
  let text: string;
  try {
    text = await io.readFile(file);
  } catch {
    throw new UsageError(`--parameters: cannot read ${file}`);
  }
  try {
    return /\.json$/i.test(file) ? JSON.parse(text) : parseYaml(text, { maxAliasCount: 100 });
  } catch (e) {
    throw new UsageError(
      `--parameters: ${file} is not valid ${/\.json$/i.test(file) ? 'JSON' : 'YAML'}: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`,
    );
  }
};

const accepted = (io: CliIo, json: boolean, a: { requestId: string; detail: string }): ExitCode => {
  if (json) printJson(io, a);
  else io.out(`${a.detail} (request ${a.requestId}; settlement decides: check with \`gpunet subnet get\`)\n`);
  return ExitCode.Ok;
};

const createCommand: Command = {
  name: 'create',
  summary: 'ask settlement to create a subnet (you stake and own it)',
  help: help(
    'create <subnet-id> --asset NTX --stake MINOR --parameters FILE [--idempotency-key K] [--json]',
    [
      'FILE (YAML or JSON) holds the subnet parameters: gpuClasses, pricing, billingIncrementSeconds,',
      'minimumChargeSeconds, subnetFeeBps, providerMinStake, slashing, unbondingSeconds, membership',
      '(docs/api.md, CreateSubnet). Settlement creates it asynchronously (202).',
    ],
    [
      "  --asset A         the subnet's asset",
      '  --stake MINOR     your stake, in minor units',
      '  --parameters FILE the parameters',
    ],
  ),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      json: { type: 'boolean', default: false },
      asset: { type: 'string' },
      stake: { type: 'string' },
      parameters: { type: 'string' },
      'idempotency-key': { type: 'string' },
    });
    const subnetId = oneSubnetId(positionals);
    if (values.asset === undefined || !ASSET.test(values.asset))
      throw new UsageError('--asset is required: an asset code like NTX');
    const stake = minorOption('stake', values.stake);
    if (values.parameters === undefined) throw new UsageError('--parameters FILE is required');
    const parameters = await readParameters(io, values.parameters);
    const a = await (
      await connect(io)
    ).json('POST', '/v1/subnets', 'Accepted', {
      body: { subnetId, asset: values.asset, stake, parameters },
      file: values.parameters,
      ...(values['idempotency-key'] !== undefined ? { idempotencyKey: values['idempotency-key'] } : {}),
    });
    return accepted(io, values.json, a);
  },
};

const joinCommand: Command = {
  name: 'join',
  summary: 'join a subnet as a provider, staking at least its minimum',
  help: help(
    'join <subnet-id> --stake MINOR [--idempotency-key K] [--json]',
    ['Settlement records the membership asynchronously (202).'],
    ["  --stake MINOR   the stake, in minor units of the subnet's asset"],
  ),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      json: { type: 'boolean', default: false },
      stake: { type: 'string' },
      'idempotency-key': { type: 'string' },
    });
    const subnetId = oneSubnetId(positionals);
    const stake = minorOption('stake', values.stake);
    const a = await (
      await connect(io)
    ).json('POST', `/v1/subnets/${subnetId}/join`, 'Accepted', {
      body: { stake },
      ...(values['idempotency-key'] !== undefined ? { idempotencyKey: values['idempotency-key'] } : {}),
    });
    return accepted(io, values.json, a);
  },
};

const getCommand: Command = {
  name: 'get',
  summary: "a subnet's owner, stake, treasury, providers and totals",
  help: help('get <subnet-id> [--json]', ["Settlement's view of the subnet."], []),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, { json: { type: 'boolean', default: false } });
    const subnetId = oneSubnetId(positionals);
    const s = await (await connect(io)).json('GET', `/v1/subnets/${subnetId}`, 'SubnetEconomics');
    if (values.json) {
      printJson(io, s);
      return ExitCode.Ok;
    }
    if (!s.exists) {
      io.err(`gpunet: there is no subnet ${subnetId}\n`);
      return ExitCode.NotFound;
    }
    const a = s.asset ?? '';
    io.out(
      [
        `subnet ${s.subnetId} (version ${s.version})`,
        `  owner            ${s.ownerId ?? '—'}, stake ${money(s.ownerStake, a)}`,
        `  treasury         ${money(s.treasury, a)}`,
        `  providers        ${s.providers.length}, staked ${money(s.totalProviderStake, a)}`,
        `  jobs settled     ${s.jobsSettled}: ${money(s.paidToProviders, a)} to providers, ${money(s.subnetFees, a)} in fees`,
        '',
      ].join('\n'),
    );
    if (s.providers.length > 0)
      io.out(
        table(
          ['PROVIDER', 'STAKE', 'STATUS'],
          s.providers.map((p) => [p.providerId ?? '', money(p.stake ?? null, a), p.status ?? '']),
        ),
      );
    return ExitCode.Ok;
  },
};

export const subnetCommands: CommandGroup = {
  name: 'subnet',
  summary: 'create, join and inspect subnets',
  commands: [createCommand, joinCommand, getCommand],
};
