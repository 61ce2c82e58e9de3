import { KNOWN_ASSET_DECIMALS, parseMoney } from '@gpunet/ensemble-spec';
import { parseCommandArgs } from '../../args';
import { type Command, type CommandGroup, ExitCode, UsageError } from '../../command';
import { money, table } from '../../api/format';
import { API_EXIT_CODES, connect, intOption, minorOption, printJson } from '../../api/session';

const ASSET = /^[A-Z][A-Z0-9]{1,11}$/;
const ACCOUNT = /^[A-Z][A-Z0-9]{1,11}:[a-z]+:[A-Za-z0-9_@-]{1,260}(#[0-9a-f]{2})?$/;

const help = (usage: string, text: string[], options: string[]) =>
  [
    `Usage: gpunet account ${usage}`,
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

const balanceCommand: Command = {
  name: 'balance',
  summary: "the tenant's accounts: balance and what is available now",
  help: help(
    'balance [--asset NTX] [--json]',
    ["Wallet, escrow, payable … accounts of your tenant, from settlement's ledger."],
    ['  --asset A   only this asset'],
  ),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      json: { type: 'boolean', default: false },
      asset: { type: 'string' },
    });
    if (positionals.length > 0) throw new UsageError('takes no arguments');
    if (values.asset !== undefined && !ASSET.test(values.asset))
      throw new UsageError('--asset must be an asset code like NTX');
    const r = await (
      await connect(io)
    ).json('GET', '/v1/accounts/balances', 'Balances', { query: { asset: values.asset } });
    if (values.json) printJson(io, r);
    else if (r.accounts.length === 0) io.out('no accounts yet (deposit to your wallet first)\n');
    else
      io.out(
        table(
          ['ACCOUNT', 'PURPOSE', 'BALANCE', 'AVAILABLE', 'PENDING IN', 'PENDING OUT'],
          r.accounts.map((a) => [
            a.accountId,
            a.purpose,
            money(a.balance, a.asset),
            money(a.available, a.asset),
            money(a.creditsPending, a.asset),
            money(a.debitsPending, a.asset),
          ]),
        ),
      );
    return ExitCode.Ok;
  },
};

const statementCommand: Command = {
  name: 'statement',
  summary: "an account's ledger entries, oldest first",
  help: help(
    'statement <account-id> [--after SEQ] [--limit N] [--json]',
    [
      '<account-id> as `gpunet account balance` prints it, e.g. NTX:wallet:acme.',
      'Prints the --after of the next page when there is one.',
    ],
    ['  --after SEQ   entries after this ledger sequence', '  --limit N     1–1000 (default 100)'],
  ),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      json: { type: 'boolean', default: false },
      after: { type: 'string' },
      limit: { type: 'string' },
    });
    if (positionals.length !== 1) throw new UsageError('name exactly one account id');
    const accountId = positionals[0]!;
    if (!ACCOUNT.test(accountId))
      throw new UsageError(`'${accountId}' is not an account id <ASSET>:<purpose>:<owner>`);
    const r = await (
      await connect(io)
    ).json('GET', '/v1/accounts/statement', 'Statement', {
      query: {
        accountId,
        afterSequence: intOption('after', values.after, 0, Number.MAX_SAFE_INTEGER),
        limit: intOption('limit', values.limit, 1, 1000),
      },
    });
    if (values.json) {
      printJson(io, r);
      return ExitCode.Ok;
    }
    const asset = accountId.split(':')[0]!;
    if (r.account)
      io.out(
        `${r.account.accountId}: balance ${money(r.account.balance, asset)}, available ${money(r.account.available, asset)}\n`,
      );
    if (r.entries.length === 0) io.out('no entries\n');
    else
      io.out(
        table(
          ['SEQ', 'AT', 'DIRECTION', 'AMOUNT', 'CODE', 'KIND', 'JOB'],
          r.entries.map((e) => [
            String(e.sequence),
            e.at,
            e.direction,
            money(e.amount, asset),
            e.code,
            e.kind,
            e.jobId ?? '',
          ]),
        ),
      );
    if (r.nextAfterSequence !== null)
      io.out(`more: gpunet account statement ${accountId} --after ${r.nextAfterSequence}\n`);
    return ExitCode.Ok;
  },
};

/** `100` or `0.5` of an asset → minor units, by the asset's decimals (known, or `--decimals`). */
export const depositMinor = (amount: string, asset: string, decimalsText: string | undefined): string => {
  let decimals = KNOWN_ASSET_DECIMALS[asset];
  if (decimalsText !== undefined) {
    if (!/^(0|[1-9][0-9]?)$/.test(decimalsText) || Number(decimalsText) > 36)
      throw new UsageError('--decimals must be an integer 0–36');
    decimals = Number(decimalsText);
  }
  if (decimals === undefined)
    throw new UsageError(`the decimals of ${asset} are not known here: pass --decimals N`);
  const parsed = parseMoney(amount, decimals);
  if (!parsed.ok) throw new UsageError(`<amount>: ${parsed.reason}`);
  if (parsed.value <= 0n) throw new UsageError('<amount> must be more than 0');
  if (parsed.value >= 10n ** 38n) throw new UsageError('<amount> is too large');
  return parsed.value.toString();
};

const depositCommand: Command = {
  name: 'deposit',
  summary: "deposit to your wallet (development clusters: settlement's simulated chain)",
  help: help(
    'deposit <amount> [--asset NTX] [--decimals N] [--idempotency-key K] [--json]',
    [
      '<amount> in whole units of the asset, e.g. 100 or 0.5 (converted with its decimals: NTX has 6).',
      "Credited to your tenant's wallet before the command returns. Only a development cluster, whose",
      'settlement runs the simulated chain, takes deposits this way; on a real chain the gateway',
      "answers 503 (exit 1): deposit with a wallet to your tenant's deposit address instead.",
    ],
    [
      '  --asset A            the asset (default NTX)',
      "  --decimals N         the asset's decimals, for an asset this CLI does not know",
      '  --idempotency-key K  retrying with the same key deposits once',
    ],
  ),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      json: { type: 'boolean', default: false },
      asset: { type: 'string', default: 'NTX' },
      decimals: { type: 'string' },
      'idempotency-key': { type: 'string' },
    });
    if (positionals.length !== 1) throw new UsageError('name exactly one amount, e.g. 100 or 0.5');
    const asset = values.asset;
    if (!ASSET.test(asset)) throw new UsageError('--asset must be an asset code like NTX');
    const amount = depositMinor(positionals[0]!, asset, values.decimals);
    const decimals = values.decimals !== undefined ? Number(values.decimals) : undefined;
    const r = await (
      await connect(io)
    ).json('POST', '/v1/accounts/deposits', 'DepositReceipt', {
      body: { asset, amount },
      ...(values['idempotency-key'] !== undefined ? { idempotencyKey: values['idempotency-key'] } : {}),
    });
    if (values.json) printJson(io, r);
    else
      io.out(
        `deposited ${money(r.amount, asset, decimals)} to ${asset}:wallet:${r.ownerId} (chain tx ${r.chainTxId}); available ${money(r.available, asset, decimals)}\n`,
      );
    return ExitCode.Ok;
  },
};

const withdrawCommand: Command = {
  name: 'withdraw',
  summary: 'ask settlement to pay out from your wallet (or payable) account',
  help: help(
    'withdraw --asset NTX --amount MINOR --destination ADDR [--source wallet|payable] [--idempotency-key K] [--json]',
    ['Settlement holds, pays or rejects it asynchronously (202).'],
    [
      '  --amount MINOR     in minor units',
      '  --destination D    where to pay',
      '  --source S         wallet (default) or payable (provider earnings)',
    ],
  ),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      json: { type: 'boolean', default: false },
      asset: { type: 'string' },
      amount: { type: 'string' },
      destination: { type: 'string' },
      source: { type: 'string' },
      'idempotency-key': { type: 'string' },
    });
    if (positionals.length > 0) throw new UsageError('takes no arguments');
    if (values.asset === undefined || !ASSET.test(values.asset))
      throw new UsageError('--asset is required: an asset code like NTX');
    const amount = minorOption('amount', values.amount);
    if (!values.destination) throw new UsageError('--destination is required');
    if (values.source !== undefined && values.source !== 'wallet' && values.source !== 'payable')
      throw new UsageError('--source must be wallet or payable');
    const a = await (
      await connect(io)
    ).json('POST', '/v1/accounts/withdrawals', 'Accepted', {
      body: {
        asset: values.asset,
        amount,
        destination: values.destination,
        ...(values.source ? { source: values.source } : {}),
      },
      ...(values['idempotency-key'] !== undefined ? { idempotencyKey: values['idempotency-key'] } : {}),
    });
    if (values.json) printJson(io, a);
    else io.out(`${a.detail} (request ${a.requestId})\n`);
    return ExitCode.Ok;
  },
};

export const accountCommands: CommandGroup = {
  name: 'account',
  summary: 'balances, statements, deposits and withdrawals',
  commands: [balanceCommand, statementCommand, depositCommand, withdrawCommand],
};
