// `npm run benchmark:report -- --input report-input.json --out dir` renders a report from a JSON file
// (ReportInputSchema); `npm run benchmark:report -- --nats nats://127.0.0.1:4222 --out dir` asks a
// running benchmarking service (its profile and network queries). Writes <name>.md, .svg and .png.
import { FindGpuProfiles, GetNetworkEstimate, type QueryResponse } from '@gpunet/contracts';
import { askQuery } from '@gpunet/eventing';
import { toPng, toSvg } from '@gpunet/report-render';
import { connect } from '@nats-io/transport-node';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type ReportInput, renderMarkdown, renderScene } from './report';

const short = (id: string) => `${id.slice(0, 7)}…`;

/** The report's input from a running service: every provider's profile and the network estimate. */
const fromService = async (servers: string, prefix: string): Promise<ReportInput> => {
  const nc = await connect({ servers });
  try {
    const providers: ReportInput['providers'] = [];
    let cursor: string | null = null;
    do {
      const page: QueryResponse<typeof FindGpuProfiles> = await askQuery(
        nc,
        FindGpuProfiles,
        { cursor, limit: 500 },
        { prefix, timeoutMs: 10_000 },
      );
      for (const item of page.items)
        if (item.profile)
          providers.push({
            name: short(item.providerId),
            source: 'live',
            profile: item.profile,
            reliability: item.reliability.score,
          });
      cursor = page.nextCursor;
    } while (cursor !== null);
    const net = await askQuery(nc, GetNetworkEstimate, {}, { prefix, timeoutMs: 10_000 });
    return {
      generatedAt: new Date().toISOString(),
      providers,
      network: {
        hosts: net.coordinates.map((c) => ({
          id: short(c.hostId),
          x: c.x,
          y: c.y,
          height: c.height,
          site: short(c.siteId),
        })),
        links: net.links.map((l) => ({
          a: short(l.a),
          b: short(l.b),
          rttUs: l.rttUs,
          throughputBitsPerSecond: l.throughputBitsPerSecond,
          sameSite: l.sameSite,
        })),
      },
    };
  } finally {
    await nc.close();
  }
};

const main = async (): Promise<void> => {
  const { values } = parseArgs({
    options: {
      input: { type: 'string' },
      nats: { type: 'string' },
      prefix: { type: 'string', default: '' },
      out: { type: 'string', default: 'reports/benchmarking/report' },
      name: { type: 'string', default: 'report' },
    },
  });
  if ((values.input === undefined) === (values.nats === undefined))
    throw new Error('give --input <report-input.json> or --nats <url>');
  const input: ReportInput =
    values.input !== undefined
      ? (JSON.parse(readFileSync(resolve(values.input), 'utf8')) as ReportInput)
      : await fromService(values.nats!, values.prefix);
  const out = resolve(values.out);
  mkdirSync(out, { recursive: true });
  const scene = renderScene(input);
  writeFileSync(join(out, `${values.name}.md`), renderMarkdown(input, `${values.name}.png`));
  writeFileSync(join(out, `${values.name}.svg`), toSvg(scene));
  writeFileSync(join(out, `${values.name}.png`), toPng(scene));
  process.stdout.write(`wrote ${join(out, values.name)}.{md,svg,png}\n`);
};

main().catch((error: unknown) => {
  process.stderr.write(`benchmark report: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
