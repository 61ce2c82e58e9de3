import { parse as parseYaml } from 'yaml';
import { parseCommandArgs } from '../../args';
import { type Command, type CommandGroup, ExitCode, UsageError } from '../../command';
import { money, printable, shortId, table } from '../../api/format';
import type { ApiSchemas } from '../../api/responses';
import { API_EXIT_CODES, connect, intOption, minorOption, printJson } from '../../api/session';
import type { CliIo } from '../../io';

const SUBNET_ID = /^[A-Za-z0-9_-]{1,128}$/;
/** Proposal and provider ids are entity ids like subnet ids. */
const ENTITY_ID = SUBNET_ID;
const SLASH_ID = /^slash-[0-9a-f]{32}$/;
const ASSET = /^[A-Z][A-Z0-9]{1,11}$/;
const CHOICES = ['yes', 'no', 'abstain'] as const;

const oneSubnetId = (positionals: readonly string[]): string => {
  if (positionals.length !== 1) throw new UsageError('name exactly one subnet id');
  const id = positionals[0]!;
  if (!SUBNET_ID.test(id)) throw new UsageError(`'${id}' is not a subnet id (1–128 of A–Z a–z 0–9 _ -)`);
  return id;
};

/** `--name` as an entity id (a provider, a proposal), or a usage error naming the option. */
const idOption = (name: string, value: string | undefined, required: boolean): string | undefined => {
  if (value === undefined) {
    if (required) throw new UsageError(`--${name} is required`);
    return undefined;
  }
  if (!ENTITY_ID.test(value))
    throw new UsageError(`--${name}: '${value}' is not an id (1–128 of A–Z a–z 0–9 _ -)`);
  return value;
};

/** `--title` as the API takes it: 1–200 characters. */
const titleOption = (value: string | undefined, required: boolean): string | undefined => {
  if (value === undefined) {
    if (required) throw new UsageError('--title is required');
    return undefined;
  }
  if (value.length < 1 || value.length > 200) throw new UsageError('--title must be 1–200 characters');
  return value;
};

const idempotency = (key: string | undefined) => (key !== undefined ? { idempotencyKey: key } : {});

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
  else
    io.out(
      `${printable(a.detail)} (request ${a.requestId}; settlement decides: check with \`gpunet subnet get\`)\n`,
    );
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

const updateCommand: Command = {
  name: 'update',
  summary: "set a subnet's parameters as its owner (a new version, for new jobs)",
  help: help(
    'update <subnet-id> --parameters FILE [--idempotency-key K] [--json]',
    [
      'FILE (YAML or JSON) holds the whole new parameter set, as for `create`. Only in a subnet its',
      'owner governs (governance.mode: owner); in a stake-vote subnet, `propose` the change instead.',
      'Settlement applies or refuses it asynchronously (202); a refusal shows in `gpunet subnet get`.',
    ],
    ['  --parameters FILE the new parameters'],
  ),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      json: { type: 'boolean', default: false },
      parameters: { type: 'string' },
      'idempotency-key': { type: 'string' },
    });
    const subnetId = oneSubnetId(positionals);
    if (values.parameters === undefined) throw new UsageError('--parameters FILE is required');
    const parameters = await readParameters(io, values.parameters);
    const a = await (
      await connect(io)
    ).json('POST', `/v1/subnets/${subnetId}/parameters`, 'Accepted', {
      body: { parameters },
      file: values.parameters,
      ...idempotency(values['idempotency-key']),
    });
    return accepted(io, values.json, a);
  },
};

const leaveCommand: Command = {
  name: 'leave',
  summary: 'leave a subnet as a provider: your stake unbonds (still slashable meanwhile)',
  help: help(
    'leave <subnet-id> [--idempotency-key K] [--json]',
    ["Your stake is released after the subnet's unbonding period (202; settlement decides)."],
    [],
  ),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      json: { type: 'boolean', default: false },
      'idempotency-key': { type: 'string' },
    });
    const subnetId = oneSubnetId(positionals);
    const a = await (
      await connect(io)
    ).json('POST', `/v1/subnets/${subnetId}/leave`, 'Accepted', idempotency(values['idempotency-key']));
    return accepted(io, values.json, a);
  },
};

const proposalAccepted = (io: CliIo, json: boolean, a: ApiSchemas['ProposalAccepted']): ExitCode => {
  if (json) printJson(io, a);
  else
    io.out(
      `proposal ${a.proposalId}: ${printable(a.detail)} (request ${a.requestId}; check with \`gpunet subnet proposals\`)\n`,
    );
  return ExitCode.Ok;
};

const proposeCommand: Command = {
  name: 'propose',
  summary: 'propose new parameters to a stake-vote subnet (any member: owner, provider, delegator)',
  help: help(
    'propose <subnet-id> --title T --parameters FILE [--proposal-id ID] [--idempotency-key K] [--json]',
    [
      'FILE (YAML or JSON) holds the whole new parameter set, as for `create`. Members vote with their',
      'stake until the vote closes; a change that passes takes effect after the subnet’s delay.',
      'Prints the proposal id (yours, or one generated for it).',
    ],
    [
      '  --title T          what the change is, for the voters (1–200 characters)',
      '  --parameters FILE  the proposed parameters',
      '  --proposal-id ID   your id for the proposal (unique in the subnet)',
    ],
  ),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      json: { type: 'boolean', default: false },
      title: { type: 'string' },
      parameters: { type: 'string' },
      'proposal-id': { type: 'string' },
      'idempotency-key': { type: 'string' },
    });
    const subnetId = oneSubnetId(positionals);
    const title = titleOption(values.title, true)!;
    const proposalId = idOption('proposal-id', values['proposal-id'], false);
    if (values.parameters === undefined) throw new UsageError('--parameters FILE is required');
    const parameters = await readParameters(io, values.parameters);
    const a = await (
      await connect(io)
    ).json('POST', `/v1/subnets/${subnetId}/proposals`, 'ProposalAccepted', {
      body: {
        ...(proposalId !== undefined ? { proposalId } : {}),
        title,
        change: { kind: 'parameters', parameters },
      },
      file: values.parameters,
      ...idempotency(values['idempotency-key']),
    });
    return proposalAccepted(io, values.json, a);
  },
};

const bps = (n: number): string => `${n / 100} %`;

const tally = (p: ApiSchemas['SubnetProposal'], asset: string): string =>
  `yes ${money(p.yes, asset)}, no ${money(p.no, asset)}, abstain ${money(p.abstain, asset)} of ${money(p.electorate, asset)}`;

const proposalsCommand: Command = {
  name: 'proposals',
  summary: "a subnet's proposals (newest first), or one of them",
  help: help(
    'proposals <subnet-id> [<proposal-id>] [--json]',
    ['The 50 newest proposals: status, tally by stake, when the vote closes or the change takes effect.'],
    [],
  ),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, { json: { type: 'boolean', default: false } });
    if (positionals.length < 1 || positionals.length > 2)
      throw new UsageError('name a subnet id, and optionally one proposal id');
    const subnetId = oneSubnetId(positionals.slice(0, 1));
    const proposalId = positionals[1];
    if (proposalId !== undefined && !ENTITY_ID.test(proposalId))
      throw new UsageError(`'${proposalId}' is not a proposal id (1–128 of A–Z a–z 0–9 _ -)`);
    const client = await connect(io);
    // The tally is in the subnet's asset; only the subnet's view names it.
    const asset = async () =>
      (await client.json('GET', `/v1/subnets/${subnetId}`, 'SubnetEconomics')).asset ?? '';
    if (proposalId !== undefined) {
      const p = await client.json('GET', `/v1/subnets/${subnetId}/proposals/${proposalId}`, 'SubnetProposal');
      if (values.json) {
        printJson(io, p);
        return ExitCode.Ok;
      }
      const a = await asset();
      io.out(
        [
          `proposal ${p.proposalId} in ${subnetId}: ${printable(p.title)}`,
          `  proposer         ${p.proposerId}`,
          `  change           ${p.kind === 'overturn-slash' ? `overturn ${p.slashId ?? '—'}` : 'new parameters'}, decided by ${p.decidedBy === 'owner' ? 'the owner' : 'stake vote'}`,
          `  status           ${p.status}${p.reason !== null ? ` (${p.reason})` : ''}`,
          `  votes            ${tally(p, a)}`,
          `  voting ends      ${p.votingEndsAt}`,
          ...(p.takesEffectAt !== null ? [`  takes effect     ${p.takesEffectAt}`] : []),
          ...(p.appliedVersion !== null ? [`  applied as       version ${p.appliedVersion}`] : []),
          '',
        ].join('\n'),
      );
      return ExitCode.Ok;
    }
    const list = await client.json('GET', `/v1/subnets/${subnetId}/proposals`, 'SubnetProposalList');
    if (values.json) {
      printJson(io, list);
      return ExitCode.Ok;
    }
    if (list.items.length === 0) {
      io.out(`no proposals in ${subnetId}\n`);
      return ExitCode.Ok;
    }
    const a = await asset();
    io.out(
      table(
        ['PROPOSAL', 'STATUS', 'KIND', 'YES', 'NO', 'ABSTAIN', 'VOTING ENDS', 'TITLE'],
        list.items.map((p) => [
          p.proposalId,
          p.reason !== null ? `${p.status} (${p.reason})` : p.status,
          p.kind,
          money(p.yes, a),
          money(p.no, a),
          money(p.abstain, a),
          p.votingEndsAt,
          printable(p.title),
        ]),
      ),
    );
    return ExitCode.Ok;
  },
};

const voteCommand: Command = {
  name: 'vote',
  summary: 'vote on an open proposal with your stake (a later vote replaces an earlier one)',
  help: help(
    'vote <subnet-id> <proposal-id> yes|no|abstain [--idempotency-key K] [--json]',
    ['Your vote weighs your stake in the subnet when you vote (owner, provider or delegated stake).'],
    [],
  ),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      json: { type: 'boolean', default: false },
      'idempotency-key': { type: 'string' },
    });
    if (positionals.length !== 3)
      throw new UsageError('name the subnet, the proposal and yes, no or abstain');
    const subnetId = oneSubnetId(positionals.slice(0, 1));
    const [, proposalId, choice] = positionals as [string, string, string];
    if (!ENTITY_ID.test(proposalId))
      throw new UsageError(`'${proposalId}' is not a proposal id (1–128 of A–Z a–z 0–9 _ -)`);
    if (!(CHOICES as readonly string[]).includes(choice))
      throw new UsageError(`'${choice}' is not a vote: yes, no or abstain`);
    const a = await (
      await connect(io)
    ).json('POST', `/v1/subnets/${subnetId}/proposals/${proposalId}/votes`, 'Accepted', {
      body: { choice },
      ...idempotency(values['idempotency-key']),
    });
    return accepted(io, values.json, a);
  },
};

const delegateCommand: Command = {
  name: 'delegate',
  summary: 'delegate stake from your wallet to a member provider (shares its rewards and slashes)',
  help: help(
    'delegate <subnet-id> --provider P --amount MINOR [--idempotency-key K] [--json]',
    ['Adds to what you already delegate to P; settlement locks it from your wallet (202).'],
    [
      '  --provider P     the member provider (its edge id)',
      "  --amount MINOR   in minor units of the subnet's asset, more than 0",
    ],
  ),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      json: { type: 'boolean', default: false },
      provider: { type: 'string' },
      amount: { type: 'string' },
      'idempotency-key': { type: 'string' },
    });
    const subnetId = oneSubnetId(positionals);
    const providerId = idOption('provider', values.provider, true)!;
    const amount = minorOption('amount', values.amount);
    if (/^0+$/.test(amount)) throw new UsageError('--amount must be more than 0');
    const a = await (
      await connect(io)
    ).json('POST', `/v1/subnets/${subnetId}/delegations`, 'Accepted', {
      body: { providerId, amount },
      ...idempotency(values['idempotency-key']),
    });
    return accepted(io, values.json, a);
  },
};

const undelegateCommand: Command = {
  name: 'undelegate',
  summary: 'take back your whole delegation to a provider (it unbonds, still slashable meanwhile)',
  help: help(
    'undelegate <subnet-id> --provider P [--idempotency-key K] [--json]',
    ["Released after the subnet's unbonding period (202; settlement decides)."],
    ['  --provider P   the provider you delegate to'],
  ),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      json: { type: 'boolean', default: false },
      provider: { type: 'string' },
      'idempotency-key': { type: 'string' },
    });
    const subnetId = oneSubnetId(positionals);
    const providerId = idOption('provider', values.provider, true)!;
    const a = await (
      await connect(io)
    ).json(
      'DELETE',
      `/v1/subnets/${subnetId}/delegations/${providerId}`,
      'Accepted',
      idempotency(values['idempotency-key']),
    );
    return accepted(io, values.json, a);
  },
};

const appealCommand: Command = {
  name: 'appeal',
  summary: 'appeal a held slash: a proposal to overturn it',
  help: help(
    'appeal <subnet-id> <slash-id> [--title T] [--proposal-id ID] [--idempotency-key K] [--json]',
    [
      '<slash-id> as `gpunet subnet get` lists it. Decided as the subnet decides: by its owner, or by a',
      'stake vote; only while the slash is held (its appeal window). Prints the proposal id.',
    ],
    [
      '  --title T          default: appeal against <slash-id>',
      "  --proposal-id ID   your id for the appeal's proposal",
    ],
  ),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      json: { type: 'boolean', default: false },
      title: { type: 'string' },
      'proposal-id': { type: 'string' },
      'idempotency-key': { type: 'string' },
    });
    if (positionals.length !== 2) throw new UsageError('name the subnet and the slash');
    const subnetId = oneSubnetId(positionals.slice(0, 1));
    const slashId = positionals[1]!;
    if (!SLASH_ID.test(slashId))
      throw new UsageError(`'${slashId}' is not a slash id (slash- and 32 hex digits)`);
    const title = titleOption(values.title, false);
    const proposalId = idOption('proposal-id', values['proposal-id'], false);
    const a = await (
      await connect(io)
    ).json('POST', `/v1/subnets/${subnetId}/slashes/${slashId}/appeal`, 'ProposalAccepted', {
      body: {
        ...(title !== undefined ? { title } : {}),
        ...(proposalId !== undefined ? { proposalId } : {}),
      },
      ...idempotency(values['idempotency-key']),
    });
    return proposalAccepted(io, values.json, a);
  },
};

const statementCommand: Command = {
  name: 'statement',
  summary: 'your stake in a subnet, entry by entry: your own stake and each delegation',
  help: help(
    'statement <subnet-id> [--after SEQ] [--limit N] [--json]',
    [
      'Your stake account (<asset>:stake:<you>@<subnet>) and one per provider you delegate to',
      '(<asset>:stake:<you>@<subnet>@<provider>). Prints the --after of the next page when there is one.',
    ],
    [
      '  --after SEQ   entries after this ledger sequence',
      '  --limit N     1–1000 per account (default 100)',
    ],
  ),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      json: { type: 'boolean', default: false },
      after: { type: 'string' },
      limit: { type: 'string' },
    });
    const subnetId = oneSubnetId(positionals);
    const r = await (
      await connect(io)
    ).json('GET', `/v1/subnets/${subnetId}/statement`, 'SubnetStakeStatement', {
      query: {
        afterSequence: intOption('after', values.after, 0, Number.MAX_SAFE_INTEGER),
        limit: intOption('limit', values.limit, 1, 1000),
      },
    });
    if (values.json) {
      printJson(io, r);
      return ExitCode.Ok;
    }
    const next: number[] = [];
    for (const a of r.accounts) {
      const what = a.role === 'stake' ? 'your stake' : `delegated to ${a.providerId ?? '—'}`;
      io.out(
        `${a.accountId} (${what}): ${
          a.account
            ? `balance ${money(a.account.balance, r.asset)}, available ${money(a.account.available, r.asset)}`
            : 'no account yet'
        }\n`,
      );
      if (a.entries.length === 0) io.out('  no entries\n');
      else
        io.out(
          table(
            ['  SEQ', 'AT', 'DIRECTION', 'AMOUNT', 'CODE', 'KIND'],
            a.entries.map((e) => [
              `  ${e.sequence}`,
              e.at,
              e.direction,
              money(e.amount, r.asset),
              printable(e.code),
              e.kind,
            ]),
          ),
        );
      if (a.nextAfterSequence !== null) next.push(a.nextAfterSequence);
    }
    // Every account pages on the ledger's sequence: the next page starts after the least one left.
    if (next.length > 0) io.out(`more: gpunet subnet statement ${subnetId} --after ${Math.min(...next)}\n`);
    return ExitCode.Ok;
  },
};

const governanceLine = (p: ApiSchemas['SubnetEconomics']['parameters']): string => {
  const g = p?.governance;
  if (g === undefined) return '—';
  if (g.mode === 'owner') return 'by its owner';
  return `stake vote: quorum ${bps(g.quorumBps)}, threshold ${bps(g.thresholdBps)}, voting ${g.votingSeconds} s, delay ${g.delaySeconds} s`;
};

const getCommand: Command = {
  name: 'get',
  summary: "a subnet's owner, stake, members and their standing, delegations, proposals, slashes, health",
  help: help(
    'get <subnet-id> [--json]',
    [
      "Settlement's view of the subnet: members with their standing, delegations, open proposals, held",
      'slashes and its health figures; your last request settlement refused, if it was the last one.',
    ],
    [],
  ),
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
    const h = s.health;
    const r = s.lastRejection ?? null;
    io.out(
      [
        `subnet ${s.subnetId} (version ${s.version})`,
        `  owner            ${s.ownerId ?? '—'}, stake ${money(s.ownerStake, a)}`,
        `  governed         ${governanceLine(s.parameters)}`,
        `  treasury         ${money(s.treasury, a)}`,
        `  providers        ${s.providers.length}, staked ${money(s.totalProviderStake, a)}`,
        `  jobs settled     ${s.jobsSettled}: ${money(s.paidToProviders, a)} to providers, ${money(s.subnetFees, a)} in fees`,
        ...(h
          ? [
              `  health           ${h.activeProviders} active, ${h.providersInGoodStanding} in good standing; ${h.gpuSecondsSettled} GPU-seconds settled, volume ${money(h.volume, a)}`,
              `  stake            ${money(h.totalStake, a)} in all, ${money(h.delegatedStake, a)} delegated`,
              `  slashed          ${money(h.slashedToTreasury, a)} to treasury, ${money(h.slashedBurned, a)} burned, ${money(h.slashedRefunded, a)} refunded`,
            ]
          : []),
        ...(r
          ? [
              `  your last refused request: ${r.request} (${r.reason}) at ${r.rejectedAt}: ${printable(r.message)}`,
            ]
          : []),
        '',
      ].join('\n'),
    );
    if (s.providers.length > 0)
      io.out(
        table(
          ['PROVIDER', 'STAKE', 'DELEGATED', 'STATUS', 'STANDING', 'JAILED UNTIL', 'SLASHED'],
          s.providers.map((p) => [
            p.providerId,
            money(p.stake, a),
            money(p.delegated ?? '0', a),
            p.status,
            p.standing ?? '—',
            p.jailedUntil ?? '',
            money(p.slashed, a),
          ]),
        ),
      );
    const delegations = s.delegations ?? [];
    if (delegations.length > 0)
      io.out(
        `\ndelegations\n${table(
          ['DELEGATOR', 'PROVIDER', 'AMOUNT', 'STATUS', 'UNBONDS AT', 'SLASHED', 'REWARDS'],
          delegations.map((d) => [
            d.delegatorId,
            shortId(d.providerId),
            money(d.amount, a),
            d.status,
            d.unbondsAt ?? '',
            money(d.slashed, a),
            money(d.rewards, a),
          ]),
        )}`,
      );
    const open = (s.proposals ?? []).filter((p) => p.status === 'open');
    if (open.length > 0)
      io.out(
        `\nopen proposals\n${table(
          ['PROPOSAL', 'KIND', 'YES', 'NO', 'VOTING ENDS', 'TITLE'],
          open.map((p) => [
            p.proposalId,
            p.kind === 'overturn-slash' ? `overturn ${p.slashId ?? ''}` : p.kind,
            money(p.yes, a),
            money(p.no, a),
            p.votingEndsAt,
            printable(p.title),
          ]),
        )}`,
      );
    const held = (s.slashes ?? []).filter((x) => x.status === 'held');
    if (held.length > 0)
      io.out(
        `\nheld slashes\n${table(
          ['SLASH', 'PROVIDER', 'KIND', 'AMOUNT', 'TO', 'APPEAL UNTIL', 'APPEAL'],
          held.map((x) => [
            x.slashId,
            shortId(x.providerId),
            x.evidence.kind,
            money(x.amount, a),
            x.destination,
            x.appealUntil,
            x.appealProposalId ?? '',
          ]),
        )}`,
      );
    return ExitCode.Ok;
  },
};

export const subnetCommands: CommandGroup = {
  name: 'subnet',
  summary: 'create, join, govern and inspect subnets',
  commands: [
    createCommand,
    joinCommand,
    getCommand,
    updateCommand,
    leaveCommand,
    proposeCommand,
    proposalsCommand,
    voteCommand,
    delegateCommand,
    undelegateCommand,
    appealCommand,
    statementCommand,
  ],
};
