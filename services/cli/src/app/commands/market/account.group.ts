import { parseCommandArgs } from '../../args';
import { type Command, type CommandGroup, ExitCode, UsageError } from '../../command';
import { money, table } from '../../api/format';
import { AcceptedSchema, AccountStatementSchema, BalancesSchema } from '../../api/responses';
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
    ).json('GET', '/v1/accounts/balances', BalancesSchema, { query: { asset: values.asset } });
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
    ).json('GET', '/v1/accounts/statement', AccountStatementSchema, {
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
    ).json('POST', '/v1/accounts/withdrawals', AcceptedSchema, {
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
  summary: 'balances, statements and withdrawals',
  commands: [balanceCommand, statementCommand, withdrawCommand],
};
