import { parseCommandArgs } from '../../args';
import { type CommandGroup, ExitCode, UsageError } from '../../command';
import { money, table } from '../../api/format';
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

export const providersCommands: CommandGroup = {
  name: 'providers',
  summary: 'browse online providers with free GPUs',
  commands: [
    {
      name: 'ls',
      summary: 'online providers with free GPUs matching a filter',
      help: [
        'Usage: gpunet providers ls [--vendor nvidia|amd] [--model H100,A100] [--min-vram 40GB] [--min-gpus N]',
        '                           [--subnet ID] [--limit N] [--cursor C] [--json]',
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
              ['PROVIDER', 'NAME', 'FREE GPUS', 'PRICE FLOOR/GPU-HOUR', 'SUBNETS'],
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
                  floor === null ? '—' : `≥ ${money(floor, p.asset)}`,
                  p.subnets.join(','),
                ];
              }),
            ),
          );
        if (page.nextCursor) io.out(`more: gpunet providers ls --cursor ${page.nextCursor}\n`);
        return ExitCode.Ok;
      },
    },
  ],
};
