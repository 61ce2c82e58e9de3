import { parseCommandArgs } from '../../args';
import { type CommandGroup, ExitCode, UsageError } from '../../command';
import { money, printable, table } from '../../api/format';
import type { ApiSchemas } from '../../api/responses';
import { API_EXIT_CODES, connect, intOption, printJson } from '../../api/session';

const SIZE = /^([0-9]+(?:\.[0-9]+)?)\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)?$/;
const UNITS: Readonly<Record<string, number>> = {
  B: 1,
  KB: 1e3,
  MB: 1e6,
  GB: 1e9,
  TB: 1e12,
  KiB: 2 ** 10,
  MiB: 2 ** 20,
  GiB: 2 ** 30,
  TiB: 2 ** 40,
};

/** `40GB`, `80GiB`, `1000000` (bytes) → bytes. */
export const parseSize = (s: string): number => {
  const m = SIZE.exec(s.trim());
  const bytes = m ? Math.round(Number(m[1]) * UNITS[m[2] ?? 'B']!) : Number.NaN;
  if (!Number.isSafeInteger(bytes))
    throw new UsageError(`--min-vram: '${s}' is not a size (e.g. 40GB, 80GiB)`);
  return bytes;
};

const gib = (bytes: number) => `${Math.round(bytes / 2 ** 30)}GiB`;

const EDGE_ID = /^U[A-Z2-7]{55}$/;

const ms = (value: number | null): string => (value === null ? '—' : String(Math.round(value)));

/**
 * A listed provider's GPUs by verification, as the VERIFIED column shows them: `simulated` when
 * every one is; else how many of them are verified, then how many are not and why (`unverified`: a
 * challenge failed; `pending`: not challenged yet; `simulated`).
 */
export const verifiedSummary = (gpus: readonly { verification: { status: string } }[]): string => {
  const count = (status: string) => gpus.filter((g) => g.verification.status === status).length;
  if (gpus.length > 0 && count('simulated') === gpus.length) return 'simulated';
  return [
    `${count('verified')}/${gpus.length} verified`,
    ...(['unverified', 'pending', 'simulated'] as const)
      .filter((status) => count(status) > 0)
      .map((status) => `${count(status)} ${status}`),
  ].join(', ');
};

/** The provider view: who, each GPU's verification, reliability, then the latest challenges. */
export const describeProvider = (p: ApiSchemas['Provider']): string => {
  const out: string[] = [];
  out.push(`provider ${p.providerId}`);
  out.push(
    `  name ${p.name}${p.simulated ? ' (simulated)' : ''}, ${p.status}, subnets ${p.subnets.join(',') || '—'}`,
  );
  if (p.simulated)
    out.push('  simulated: its GPUs are declared, not detected, and are never challenged or verified');
  out.push(`  isolation ${p.isolation}: ${printable(p.isolationDetail)}`);
  const r = p.reliability;
  out.push(
    r === null
      ? '  reliability: no record yet'
      : `  reliability ${r.score.toFixed(2)}: ${r.verifiedRuns} verified, ${r.failedRuns} failed, ${r.mismatches} mismatched`,
  );
  out.push('');
  const byUuid = new Map(p.gpus.map((g) => [g.uuid, g]));
  const gpuName = (uuid: string) => {
    const g = byUuid.get(uuid);
    return g === undefined ? uuid : String(g.index);
  };
  out.push(
    table(
      ['GPU', 'MODEL', 'VRAM', 'OFFERED', 'VERIFICATION', 'SINCE'],
      p.gpus.map((g) => [
        String(g.index),
        `${g.model}${g.simulated ? ' (simulated)' : ''}`,
        gib(g.vramBytes),
        g.available ? 'yes' : 'no',
        g.simulated && g.verification.status !== 'simulated'
          ? `${g.verification.status} (simulated)`
          : g.verification.status,
        g.verification.since ?? '—',
      ]),
    ).trimEnd(),
  );
  const challenges = new Map(p.challenges.map((c) => [c.challengeId, c]));
  for (const g of p.gpus) {
    if (g.verification.status !== 'unverified') continue;
    const c = g.verification.challengeId === null ? undefined : challenges.get(g.verification.challengeId);
    const failure = c?.evidence.failure;
    out.push(
      `  GPU ${g.index} unverified: ${
        failure
          ? `${failure.kind}: ${printable(failure.detail)}`
          : `challenge ${g.verification.challengeId ?? '—'}`
      }`,
    );
  }
  out.push('');
  if (p.challenges.length === 0) out.push('no challenges yet');
  else {
    out.push('latest challenges:');
    out.push(
      table(
        ['WHEN', 'REASON', 'GPU', 'OUTCOME', 'N/DTYPE', 'ELAPSED/DEADLINE MS', 'CLAIMED TFLOPS', 'FAILURE'],
        p.challenges.map((c) => [
          c.at,
          c.reason,
          `${gpuName(c.gpuUuid)}${byUuid.get(c.gpuUuid)?.simulated ? ' (simulated)' : ''}`,
          c.outcome,
          `${c.evidence.n} ${c.evidence.dtype}`,
          `${ms(c.evidence.elapsedMs)}/${c.evidence.deadlineMs}`,
          String(c.evidence.claimedTflops),
          c.evidence.failure ? `${c.evidence.failure.kind}: ${printable(c.evidence.failure.detail)}` : '—',
        ]),
      ).trimEnd(),
    );
  }
  return `${out.join('\n')}\n`;
};

export const providersCommands: CommandGroup = {
  name: 'providers',
  summary: "browse online providers with free GPUs; see one provider's GPU verification",
  commands: [
    {
      name: 'ls',
      summary: 'online providers with free GPUs matching a filter, and how many are verified',
      help: [
        'Usage: gpunet providers ls [--vendor nvidia|amd] [--model H100,A100] [--min-vram 40GB] [--min-gpus N]',
        '                           [--subnet ID] [--limit N] [--cursor C] [--json]',
        '',
        'VERIFIED counts the free GPUs benchmarking has verified by challenge, and the rest by status:',
        "unverified (a challenge failed: 'gpunet providers show' says why), pending (not challenged yet),",
        "simulated (declared, never challenged; 'simulated' alone when every one is).",
        'ISOLATION is how the edge runs ranks, weakest first: host-process, container, container-userns,',
        "gvisor; a job goes only to edges at or above its subnet's trust.minimumIsolation.",
        '',
        'Options:',
        '  --vendor V        nvidia (default) or amd',
        '  --model M,…       GPU models (any when absent)',
        '  --min-vram SIZE   per GPU, e.g. 40GB or 80GiB',
        '  --min-gpus N      free GPUs a provider has at least (1–64)',
        '  --subnet ID       providers of this subnet',
        '  --limit N         1–1000 (default 100); --cursor C the next page',
        "  --json            the gateway's document",
        '',
        ...API_EXIT_CODES,
        '',
      ].join('\n'),
      async run(args, io) {
        const { values, positionals } = parseCommandArgs(args, {
          json: { type: 'boolean', default: false },
          vendor: { type: 'string' },
          model: { type: 'string' },
          'min-vram': { type: 'string' },
          'min-gpus': { type: 'string' },
          subnet: { type: 'string' },
          limit: { type: 'string' },
          cursor: { type: 'string' },
        });
        if (positionals.length > 0) throw new UsageError('takes no arguments');
        if (values.vendor !== undefined && values.vendor !== 'nvidia' && values.vendor !== 'amd')
          throw new UsageError('--vendor must be nvidia or amd');
        const page = await (
          await connect(io)
        ).json('GET', '/v1/providers', 'ProviderList', {
          query: {
            vendor: values.vendor,
            model: values.model,
            minVramBytes: values['min-vram'] !== undefined ? parseSize(values['min-vram']) : undefined,
            minGpus: intOption('min-gpus', values['min-gpus'], 1, 64),
            subnet: values.subnet,
            limit: intOption('limit', values.limit, 1, 1000),
            cursor: values.cursor,
          },
        });
        if (values.json) {
          printJson(io, page);
          return ExitCode.Ok;
        }
        if (page.items.length === 0) io.out('no providers match\n');
        else
          io.out(
            table(
              ['PROVIDER', 'NAME', 'FREE GPUS', 'VERIFIED', 'ISOLATION', 'PRICE FLOOR/GPU-HOUR', 'SUBNETS'],
              page.items.map((p) => {
                const models = new Map<string, number>();
                for (const g of p.gpus)
                  models.set(
                    `${g.model} ${gib(g.vramBytes)}`,
                    (models.get(`${g.model} ${gib(g.vramBytes)}`) ?? 0) + 1,
                  );
                const floors = p.gpus.map((g) => g.priceFloorMinor).filter((f): f is string => f !== null);
                const floor =
                  floors.length > 0 ? floors.reduce((a, b) => (BigInt(a) < BigInt(b) ? a : b)) : null;
                return [
                  p.providerId,
                  `${p.name}${p.simulated ? ' (simulated)' : ''}`,
                  [...models].map(([m, c]) => `${c}× ${m}`).join(', '),
                  verifiedSummary(p.gpus),
                  p.isolation,
                  floor === null ? '—' : `≥ ${money(floor, p.asset)}`,
                  p.subnets.join(','),
                ];
              }),
            ),
          );
        if (page.items.some((p) => p.gpus.some((g) => g.verification.status === 'unverified')))
          io.out('a GPU failed its challenge: gpunet providers show <provider> says why\n');
        if (page.nextCursor) io.out(`more: gpunet providers ls --cursor ${page.nextCursor}\n`);
        return ExitCode.Ok;
      },
    },
    {
      name: 'show',
      summary: "one provider: its GPUs' verification, reliability and latest challenges with their evidence",
      help: [
        'Usage: gpunet providers show <provider-id> [--json]',
        '',
        'Shows a provider as the network sees it, offline or not: each GPU with its verification (pending,',
        'verified, unverified, simulated) and why, the reliability placement breaks ties with, and the',
        'latest challenges: when, why, which GPU, the outcome, the size and dtype, the time the commitment',
        "took against its deadline (the verifier's clock), the TFLOPS the deadline came from, the failure.",
        'A simulated GPU says so on every line. The isolation line says how the edge runs ranks and what',
        'that rests on, as the edge checked and reported it.',
        '',
        'Options:',
        "  --json            the gateway's document",
        '',
        ...API_EXIT_CODES,
        '',
      ].join('\n'),
      async run(args, io) {
        const { values, positionals } = parseCommandArgs(args, { json: { type: 'boolean', default: false } });
        if (positionals.length !== 1) throw new UsageError('name exactly one provider id');
        const id = positionals[0]!;
        if (!EDGE_ID.test(id))
          throw new UsageError(`'${id}' is not a provider id (its edge's public key: U and 55 of A–Z 2–7)`);
        const provider = await (await connect(io)).json('GET', `/v1/providers/${id}`, 'Provider');
        if (values.json) printJson(io, provider);
        else io.out(describeProvider(provider));
        return ExitCode.Ok;
      },
    },
  ],
};
