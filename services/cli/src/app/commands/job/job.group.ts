import { parseCommandArgs } from '../../args';
import { type Command, type CommandGroup, ExitCode, UsageError } from '../../command';
import { API_EXIT_CODES, connect, intOption, printJson } from '../../api/session';
import { money, table } from '../../api/format';
import { formatReport, toReport } from '../spec/report';
import { checkSpecFile } from '../spec/spec-files';
import { followJob } from './follow';
import { describeJob } from './job-view';
import { JOB_STATUSES } from '../../api/responses';
import { describeExplanation } from './explanation-view';
import { readEventStream } from '../../api/sse';
import { renderLogChunk, toLogChunk } from './live-view';

const JOB_ID = /^[A-Za-z0-9_-]{1,128}$/;
const jobPath = (id: string) => `/v1/jobs/${encodeURIComponent(id)}`;

const oneJobId = (positionals: readonly string[]): string => {
  if (positionals.length !== 1) throw new UsageError('name exactly one job id');
  const id = positionals[0]!;
  if (!JOB_ID.test(id)) throw new UsageError(`'${id}' is not a job id (1–128 of A–Z a–z 0–9 _ -)`);
  return id;
};

const help = (usage: string, text: string[], options: string[]): string =>
  [
    `Usage: gpunet job ${usage}`,
    '',
    ...text,
    '',
    'Options:',
    ...options,
    '  --json      machine-readable output',
    '',
    ...API_EXIT_CODES,
    '',
  ].join('\n');

const FOLLOW_HELP = [
  'With --follow, prints one line per transition of the job (submitted, funded, queued with its reason,',
  'placed on which providers, ranks starting, running, usage, completed/failed with the reason) and',
  "the ranks' output as `[rank N] …`, then the final usage and cost; exits 0 when the job completed,",
  '1 when it failed, was cancelled, rejected or unschedulable. --json: one JSON object per line',
  '({"kind":"event"|"log"|"end", …}).',
];

export const submitCommand: Command = {
  name: 'submit',
  summary: 'validate a spec locally, submit it, optionally follow the job to its end',
  help: help(
    'submit <spec.yaml|spec.json> [--follow] [--idempotency-key KEY] [--json]',
    [
      'Validates the spec with the same validator as the gateway (errors with file:line:column, nothing',
      'sent), then POSTs the file as is (application/yaml, or application/json for .json) and prints the',
      'job id.',
      '',
      ...FOLLOW_HELP,
    ],
    [
      '  --follow, -f              follow the job until it ends (see above)',
      '  --idempotency-key KEY     retrying with the same key and file returns the first job, never a second',
      "  --no-logs                 with --follow: events only, without the ranks' output",
    ],
  ),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      json: { type: 'boolean', default: false },
      follow: { type: 'boolean', short: 'f', default: false },
      'idempotency-key': { type: 'string' },
      'no-logs': { type: 'boolean', default: false },
    });
    if (positionals.length !== 1) throw new UsageError('name exactly one spec file');
    const key = values['idempotency-key'];
    if (key !== undefined && !/^[\x21-\x7e]{1,255}$/.test(key))
      throw new UsageError('--idempotency-key must be 1–255 printable ASCII characters without spaces');
    const file = positionals[0]!;
    const outcome = await checkSpecFile(file, io);
    if ('readError' in outcome || !outcome.result.ok) {
      const report = toReport(outcome);
      if (values.json)
        printJson(io, { ok: false, error: { code: 'INVALID_SPEC', file, errors: report.errors } });
      else io.err(formatReport(report));
      return ExitCode.Failed;
    }
    const source = await io.readFile(file);
    const client = await connect(io);
    const job = await client.json('POST', '/v1/jobs', 'Job', {
      body: source,
      contentType: /\.json$/i.test(file) ? 'application/json' : 'application/yaml',
      file,
      ...(key !== undefined ? { idempotencyKey: key } : {}),
    });
    if (values.json)
      io.out(
        `${JSON.stringify(values.follow ? { kind: 'submitted', job } : job, null, values.follow ? undefined : 2)}\n`,
      );
    else
      io.out(
        `submitted job ${job.jobId} (${job.name}): ${job.gpus} GPUs in subnet ${job.subnetId}, status ${job.status}\n`,
      );
    if (!values.follow) return ExitCode.Ok;
    return followJob(client, io, job.jobId, { json: values.json, logs: !values['no-logs'] });
  },
};

const STATUSES: readonly string[] = JOB_STATUSES;

export const lsCommand: Command = {
  name: 'ls',
  summary: "list the tenant's jobs, newest first",
  help: help(
    'ls [--status S[,S…]] [--subnet ID] [--limit N] [--cursor C] [--json]',
    [`Statuses: ${STATUSES.join(', ')}.`, 'Prints the cursor of the next page when there is one.'],
    [
      '  --status S,…    only jobs in these statuses',
      '  --subnet ID     only jobs of this subnet',
      '  --limit N       1–200 (default 50)',
      '  --cursor C      the next page (printed by the previous one)',
    ],
  ),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      json: { type: 'boolean', default: false },
      status: { type: 'string' },
      subnet: { type: 'string' },
      limit: { type: 'string' },
      cursor: { type: 'string' },
    });
    if (positionals.length > 0) throw new UsageError('takes no arguments');
    if (values.status !== undefined) {
      const bad = values.status.split(',').filter((s) => !STATUSES.includes(s.trim()));
      if (bad.length > 0)
        throw new UsageError(`--status: unknown ${bad.join(', ')}; one of ${STATUSES.join(', ')}`);
    }
    const limit = intOption('limit', values.limit, 1, 200);
    const client = await connect(io);
    const page = await client.json('GET', '/v1/jobs', 'JobList', {
      query: { status: values.status, subnet: values.subnet, limit, cursor: values.cursor },
    });
    if (values.json) {
      printJson(io, page);
      return ExitCode.Ok;
    }
    if (page.items.length === 0) io.out('no jobs\n');
    else
      io.out(
        table(
          ['JOB', 'NAME', 'STATUS', 'GPUS', 'SUBNET', 'SUBMITTED', 'COST'],
          page.items.map((j) => [
            j.jobId,
            j.name,
            j.status,
            String(j.gpus),
            j.subnetId,
            j.submittedAt,
            money(j.cost.accrued, j.cost.asset),
          ]),
        ),
      );
    if (page.nextCursor) io.out(`more: gpunet job ls --cursor ${page.nextCursor}\n`);
    return ExitCode.Ok;
  },
};

export const getCommand: Command = {
  name: 'get',
  summary: 'a job: status, placement, ranks and their addresses, usage, cost',
  help: help('get <job-id> [--json]', ['Prints the job as the gateway sees it now.'], []),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, { json: { type: 'boolean', default: false } });
    const id = oneJobId(positionals);
    const job = await (await connect(io)).json('GET', jobPath(id), 'Job');
    if (values.json) printJson(io, job);
    else io.out(describeJob(job));
    return ExitCode.Ok;
  },
};

export const cancelCommand: Command = {
  name: 'cancel',
  summary: 'cancel a job (at any stage before it ends)',
  help: help(
    'cancel <job-id> [--reason TEXT] [--json]',
    [
      'Asks execution to stop the ranks; the job ends `cancelled` (follow it with `gpunet job get`).',
      'A job that already ended: exit 1 (HTTP 409).',
    ],
    ['  --reason TEXT   recorded with the request'],
  ),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      json: { type: 'boolean', default: false },
      reason: { type: 'string' },
    });
    const id = oneJobId(positionals);
    if (values.reason !== undefined && values.reason.length > 1024)
      throw new UsageError('--reason: at most 1024 characters');
    const job = await (
      await connect(io)
    ).json('POST', `${jobPath(id)}/cancel`, 'Job', {
      body: values.reason !== undefined ? { reason: values.reason } : {},
    });
    if (values.json) printJson(io, job);
    else io.out(`cancellation of job ${job.jobId} requested (status ${job.status})\n`);
    return ExitCode.Ok;
  },
};

export const logsCommand: Command = {
  name: 'logs',
  summary: "the ranks' output; --follow streams it with the job's transitions until the job ends",
  help: help(
    'logs <job-id> [--follow] [--rank N] [--stream stdout|stderr] [--json]',
    [
      'Prints what the ranks wrote so far, each line prefixed `[rank N]` (`[rank N stderr]` for stderr).',
      '',
      ...FOLLOW_HELP,
    ],
    [
      "  --follow, -f          keep streaming, with the job's transitions, until the job ends",
      '  --rank N              only this rank (not with --follow)',
      '  --stream S            only stdout or stderr (not with --follow)',
    ],
  ),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      json: { type: 'boolean', default: false },
      follow: { type: 'boolean', short: 'f', default: false },
      rank: { type: 'string' },
      stream: { type: 'string' },
    });
    const id = oneJobId(positionals);
    const rank = intOption('rank', values.rank, 0, 65_535);
    if (values.stream !== undefined && values.stream !== 'stdout' && values.stream !== 'stderr')
      throw new UsageError('--stream must be stdout or stderr');
    if (values.follow && (rank !== undefined || values.stream !== undefined))
      throw new UsageError('--rank and --stream filter the stored output; they do not go with --follow');
    const client = await connect(io);
    if (values.follow) return followJob(client, io, id, { json: values.json });
    for await (const e of readEventStream(
      client,
      io,
      `${jobPath(id)}/logs`,
      { rank, stream: values.stream },
      {
        endIsFinal: true,
        isTerminal: (x) => x.event === 'end',
      },
    )) {
      const chunk = toLogChunk(e);
      if (!chunk) continue;
      if (values.json)
        io.out(`${JSON.stringify({ seq: e.id !== undefined ? Number(e.id) : null, ...chunk })}\n`);
      else for (const l of renderLogChunk(chunk)) io.out(`${l}\n`);
    }
    return ExitCode.Ok;
  },
};

export const waitCommand: Command = {
  name: 'follow',
  summary: 'follow a submitted job to its end (the live view of submit --follow)',
  help: help('follow <job-id> [--no-logs] [--json]', FOLLOW_HELP, [
    "  --no-logs   events only, without the ranks' output",
  ]),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      json: { type: 'boolean', default: false },
      'no-logs': { type: 'boolean', default: false },
    });
    const id = oneJobId(positionals);
    return followJob(await connect(io), io, id, { json: values.json, logs: !values['no-logs'] });
  },
};

export const statementCommand: Command = {
  name: 'statement',
  summary: "a job's money: escrow, payments, fees, refund and ledger legs",
  help: help('statement <job-id> [--json]', ["Settlement's statement of the job."], []),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, { json: { type: 'boolean', default: false } });
    const id = oneJobId(positionals);
    const s = await (await connect(io)).json('GET', `${jobPath(id)}/statement`, 'JobStatement');
    if (values.json) {
      printJson(io, s);
      return ExitCode.Ok;
    }
    const a = s.asset ?? '';
    io.out(
      [
        `job ${s.jobId}: ${s.status}`,
        `  funded            ${money(s.funded, a)}`,
        `  paid to providers ${money(s.paidToProviders, a)}`,
        `  subnet fees       ${money(s.subnetFees, a)}`,
        `  platform fees     ${money(s.platformFees, a)}`,
        `  refunded          ${money(s.refunded, a)}`,
        `  pending           ${money(s.pending, a)}`,
        `  escrow balance    ${money(s.escrowBalance, a)}`,
        '',
      ].join('\n'),
    );
    if (s.legs.length > 0)
      io.out(
        table(
          ['SEQ', 'KIND', 'CODE', 'FROM', 'TO', 'AMOUNT', 'AT'],
          s.legs.map((l) => [
            String(l.sequence),
            l.kind,
            l.code,
            l.debitAccountId,
            l.creditAccountId,
            money(l.amount, a),
            l.at,
          ]),
        ),
      );
    return ExitCode.Ok;
  },
};

export const explainJobCommand: Command = {
  name: 'explain',
  summary: 'why a job is placed where it is, or why it is not placed (the scheduler’s explanation)',
  help: help(
    'explain <job-id> [--json]',
    [
      "The scheduler's explanation of its last attempt at the job: the chosen nodes; the predicted step",
      'time split into compute and communication; every figure it used with its source (measured,',
      'estimated, lan, reference, assumed) and its age when the scheduler decided, e.g.',
      '`rtt 80.2 ms (measured 3 min before placing)`; and the best gangs not chosen, each with its step',
      'time, price and why it lost. For a job not placed: the reasons. Before the first attempt: exit 4.',
      '(`gpunet spec explain` is another thing: it says in words what a spec file asks for.)',
    ],
    [],
  ),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, { json: { type: 'boolean', default: false } });
    const id = oneJobId(positionals);
    const client = await connect(io);
    const explanation = await client.json('GET', `${jobPath(id)}/explanation`, 'PlacementExplanation');
    if (values.json) {
      printJson(io, explanation);
      return ExitCode.Ok;
    }
    // Prices are in the job's asset, which the job view names.
    const job = await client.json('GET', jobPath(id), 'Job');
    io.out(describeExplanation(explanation, job.asset));
    return ExitCode.Ok;
  },
};

export const jobCommands: CommandGroup = {
  name: 'job',
  summary: 'submit, list, follow, inspect and cancel jobs (through the gateway)',
  commands: [
    submitCommand,
    lsCommand,
    getCommand,
    explainJobCommand,
    logsCommand,
    waitCommand,
    cancelCommand,
    statementCommand,
  ],
};
