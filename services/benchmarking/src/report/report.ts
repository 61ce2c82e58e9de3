import { type BenchmarkProfile, BenchmarkProfileSchema } from '@gpunet/contracts';
import type { Scene, Shape } from '@gpunet/report-render';
import { z } from 'zod';
import { type Claim, verifyClaim } from '../domain/verification';

/*
 * The benchmark report: profiles across GPU types and the measured network, as Markdown and a plot
 * (a scene that `@gpunet/report-render` draws as SVG and PNG). Pure: the CLI (`report.main.ts`)
 * gathers the input from a running service or a JSON file and writes the files.
 */

const ClaimSchema = z.strictObject({
  simulated: z.boolean(),
  gpus: z
    .array(
      z.strictObject({ index: z.int(), uuid: z.string(), model: z.string(), vramBytes: z.number().min(0) }),
    )
    .readonly(),
});

export const ReportInputSchema = z.strictObject({
  title: z.string().default('gpunet benchmark report'),
  generatedAt: z.string(),
  providers: z.array(
    z.strictObject({
      name: z.string().min(1).max(64),
      /** Where the profile comes from: a real run (`recorded`), a run on a fake runtime (`reconstructed`), a simulated edge, or the live service. */
      source: z.enum(['recorded', 'reconstructed', 'simulated', 'live']),
      claim: ClaimSchema.nullable().default(null),
      reliability: z.number().min(0).max(1).nullable().default(null),
      profile: BenchmarkProfileSchema,
    }),
  ),
  network: z
    .strictObject({
      hosts: z.array(
        z.strictObject({
          id: z.string(),
          x: z.number(),
          y: z.number(),
          height: z.number(),
          site: z.string(),
        }),
      ),
      links: z.array(
        z.strictObject({
          a: z.string(),
          b: z.string(),
          rttUs: z.number(),
          throughputBitsPerSecond: z.number().nullable(),
          sameSite: z.boolean(),
          /** The configured rate of the link (testbeds), for comparison. */
          expectedBitsPerSecond: z.number().nullable().default(null),
        }),
      ),
      /** How well the coordinates predict pairs never probed (testbeds, where the truth is known). */
      accuracy: z
        .strictObject({
          pairs: z.int(),
          probedPairs: z.int(),
          unprobedPairs: z.int(),
          medianRttError: z.number(),
          maxThroughputError: z.number().nullable(),
        })
        .nullable()
        .default(null),
      note: z.string().nullable().default(null),
    })
    .nullable()
    .default(null),
});
export type ReportInput = z.input<typeof ReportInputSchema>;
type Input = z.output<typeof ReportInputSchema>;

const fmt = (x: number | null | undefined, digits = 3): string =>
  x === null || x === undefined ? '–' : x >= 100 ? x.toFixed(0) : Number(x.toPrecision(digits)).toString();
const GiB = 1024 ** 3;
const tensorBest = (p: BenchmarkProfile['devices'][number]) =>
  Math.max(p.matmulTflops.fp16 ?? 0, p.matmulTflops.bf16 ?? 0) || null;

const verdictOf = (claim: Claim | null, profile: BenchmarkProfile) => {
  if (claim === null) return { text: '–', failed: [] as string[] };
  const v = verifyClaim(claim, profile);
  return v.failed.length === 0
    ? { text: 'verified', failed: [] }
    : {
        text: '**mismatch**',
        failed: v.failed.map(
          (c) =>
            `${c.metric} ${fmt(c.measured)} < ${fmt(c.expectedMin)} (${c.reference ?? 'claim'}: ${fmt(c.published)}, ratio ${fmt(c.ratio, 2)})`,
        ),
      };
};

/** The report as Markdown; `plotFile` is the image it links to. */
export const renderMarkdown = (raw: ReportInput, plotFile: string): string => {
  const input: Input = ReportInputSchema.parse(raw);
  const lines: string[] = [`# ${input.title}`, '', `Generated ${input.generatedAt}.`, ''];
  const types = new Set(input.providers.map((p) => p.profile.devices[0]?.name ?? '?'));
  lines.push(
    `${input.providers.length} providers, ${types.size} device types. Figures are the best of several trials ` +
      '(docs/benchmarking.md); `kind` says what was measured — `gpu` and `cpu` are real runs, `simulated` is a ' +
      'simulated edge’s declared figures with noise. `source` says where this report got the profile.',
    '',
    `![GPU profiles and network](${plotFile})`,
    '',
    '## GPU profiles',
    '',
    '| provider | source | kind | device | ×n | memory GiB | fp32 | tf32 | fp16 | bf16 TFLOPS | mem GB/s | H→D | D→H GB/s | GPU↔GPU GB/s | claim | reliability |',
    '| --- | --- | --- | --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --- | --: |',
  );
  const mismatches: string[] = [];
  for (const p of input.providers) {
    const d = p.profile.devices[0];
    const verdict = verdictOf(p.claim, p.profile);
    if (verdict.failed.length > 0)
      mismatches.push(
        `- **${p.name}** claims ${p.claim!.gpus[0]?.model ?? '?'}: ${verdict.failed.join('; ')}`,
      );
    const peers = p.profile.peers.map((x) => x.GBps);
    lines.push(
      `| ${p.name} | ${p.source} | ${p.profile.kind} | ${d?.name ?? '–'} | ${p.profile.devices.length} | ${fmt(
        d?.memoryBytes == null ? null : d.memoryBytes / GiB,
      )} | ${fmt(d?.matmulTflops.fp32)} | ${fmt(d?.matmulTflops.tf32)} | ${fmt(d?.matmulTflops.fp16)} | ${fmt(
        d?.matmulTflops.bf16,
      )} | ${fmt(d?.memoryBandwidthGBps)} | ${fmt(d?.hostToDeviceGBps)} | ${fmt(d?.deviceToHostGBps)} | ${
        peers.length === 0 ? '–' : `${fmt(Math.min(...peers))}–${fmt(Math.max(...peers))}`
      } | ${verdict.text} | ${fmt(p.reliability, 2)} |`,
    );
  }
  lines.push('', '### Profiles', '');
  for (const p of input.providers)
    lines.push(
      `- **${p.name}**: \`${p.profile.profileId}\`, ${p.profile.runner.name} ${p.profile.runner.version} (${p.profile.runner.backend}${
        p.profile.runner.torch ? `, torch ${p.profile.runner.torch}` : ''
      }), measured ${p.profile.measuredAt}, expires ${p.profile.expiresAt}${
        p.profile.notes.length > 0 ? ` — ${p.profile.notes.join('; ')}` : ''
      }`,
    );
  if (mismatches.length > 0) lines.push('', '## Claims that do not hold', '', ...mismatches);
  const net = input.network;
  if (net !== null) {
    lines.push('', '## Network', '');
    if (net.note) lines.push(net.note, '');
    if (net.accuracy)
      lines.push(
        `${net.hosts.length} hosts, ${net.accuracy.probedPairs} of ${net.accuracy.pairs} pairs probed; coordinates predict the ` +
          `${net.accuracy.unprobedPairs} pairs never probed with a median relative RTT error of ` +
          `${(net.accuracy.medianRttError * 100).toFixed(1)}%` +
          (net.accuracy.maxThroughputError === null
            ? '.'
            : `; measured throughput within ${(net.accuracy.maxThroughputError * 100).toFixed(1)}% of the configured rates.`),
        '',
      );
    lines.push(
      '| a | b | RTT ms | throughput Mbit/s | configured Mbit/s | same site |',
      '| --- | --- | --: | --: | --: | --- |',
    );
    // One row per direction: the lowest RTT of its probes and the newest throughput.
    const rows = new Map<string, (typeof net.links)[number]>();
    for (const l of net.links) {
      const key = `${l.a}>${l.b}`;
      const seen = rows.get(key);
      rows.set(
        key,
        seen === undefined
          ? l
          : {
              ...seen,
              rttUs: Math.min(seen.rttUs, l.rttUs),
              throughputBitsPerSecond: l.throughputBitsPerSecond ?? seen.throughputBitsPerSecond,
              expectedBitsPerSecond: l.expectedBitsPerSecond ?? seen.expectedBitsPerSecond,
            },
      );
    }
    for (const l of [...rows.values()].sort((x, y) =>
      x.a === y.a ? (x.b < y.b ? -1 : 1) : x.a < y.a ? -1 : 1,
    ))
      lines.push(
        `| ${l.a} | ${l.b} | ${fmt(l.rttUs / 1000)} | ${fmt(l.throughputBitsPerSecond === null ? null : l.throughputBitsPerSecond / 1e6)} | ${fmt(
          l.expectedBitsPerSecond === null ? null : l.expectedBitsPerSecond / 1e6,
        )} | ${l.sameSite ? 'yes' : ''} |`,
      );
    lines.push('', '| host | x ms | y ms | height ms | site |', '| --- | --: | --: | --: | --- |');
    for (const h of net.hosts)
      lines.push(
        `| ${h.id} | ${fmt(h.x / 1000)} | ${fmt(h.y / 1000)} | ${fmt(h.height / 1000)} | ${h.site} |`,
      );
  }
  lines.push('');
  return lines.join('\n');
};

const COLORS = {
  fp32: '#4e79a7',
  tensor: '#f28e2b',
  memory: '#59a14f',
  axis: '#555555',
  grid: '#dddddd',
  text: '#222222',
};
const SITE_COLORS = ['#e15759', '#4e79a7', '#59a14f', '#b07aa1', '#f28e2b', '#76b7b2', '#edc948', '#9c755f'];

/** Horizontal log-scale bars for one metric per provider. */
const logPanel = (
  shapes: Shape[],
  top: number,
  title: string,
  rows: readonly { label: string; values: readonly { value: number | null; color: string }[] }[],
  range: readonly [number, number],
): number => {
  const left = 250;
  const width = 700;
  const rowH = 24;
  const [lo, hi] = [Math.log10(range[0]), Math.log10(range[1])];
  const xOf = (v: number) => left + ((Math.log10(Math.max(v, range[0])) - lo) / (hi - lo)) * width;
  shapes.push({ kind: 'text', x: 20, y: top, text: title, scale: 2, fill: COLORS.text, anchor: 'start' });
  const y0 = top + 28;
  for (let d = Math.ceil(lo); d <= Math.floor(hi); d++) {
    const x = xOf(10 ** d);
    shapes.push({ kind: 'line', x1: x, y1: y0, x2: x, y2: y0 + rows.length * rowH, stroke: COLORS.grid });
    shapes.push({
      kind: 'text',
      x,
      y: y0 + rows.length * rowH + 4,
      text: d >= 0 ? String(10 ** d) : (10 ** d).toFixed(-d),
      scale: 1,
      fill: COLORS.axis,
      anchor: 'middle',
    });
  }
  rows.forEach((row, i) => {
    const y = y0 + i * rowH;
    shapes.push({
      kind: 'text',
      x: left - 8,
      y: y + 8,
      text: row.label,
      scale: 1,
      fill: COLORS.text,
      anchor: 'end',
    });
    const barH = Math.floor((rowH - 6) / row.values.length);
    row.values.forEach((v, k) => {
      if (v.value === null) return;
      const yb = y + 3 + k * barH;
      shapes.push({
        kind: 'rect',
        x: left,
        y: yb,
        w: Math.max(1, xOf(v.value) - left),
        h: barH - 1,
        fill: v.color,
      });
      shapes.push({
        kind: 'text',
        x: xOf(v.value) + 4,
        y: yb,
        text: fmt(v.value),
        scale: 1,
        fill: COLORS.text,
        anchor: 'start',
      });
    });
  });
  shapes.push({ kind: 'line', x1: left, y1: y0, x2: left, y2: y0 + rows.length * rowH, stroke: COLORS.axis });
  return y0 + rows.length * rowH + 24;
};

/** The plot: matmul TFLOPS and memory bandwidth per provider (log scales), and the hosts' network coordinates. */
export const renderScene = (raw: ReportInput): Scene => {
  const input: Input = ReportInputSchema.parse(raw);
  const shapes: Shape[] = [];
  shapes.push({
    kind: 'text',
    x: 20,
    y: 16,
    text: input.title,
    scale: 3,
    fill: COLORS.text,
    anchor: 'start',
  });
  const label = (p: Input['providers'][number]) =>
    `${p.name} ${p.profile.kind}${p.profile.devices.length > 1 ? ` x${p.profile.devices.length}` : ''}${
      p.source === 'reconstructed' ? ' (reconstructed)' : ''
    }`;
  let y = 60;
  shapes.push({ kind: 'rect', x: 250, y: y, w: 12, h: 8, fill: COLORS.fp32 });
  shapes.push({ kind: 'text', x: 266, y: y, text: 'fp32', scale: 1, fill: COLORS.text, anchor: 'start' });
  shapes.push({ kind: 'rect', x: 320, y: y, w: 12, h: 8, fill: COLORS.tensor });
  shapes.push({
    kind: 'text',
    x: 336,
    y: y,
    text: 'best of fp16/bf16',
    scale: 1,
    fill: COLORS.text,
    anchor: 'start',
  });
  y += 20;
  y = logPanel(
    shapes,
    y,
    'Dense matmul TFLOPS per device (log scale)',
    input.providers.map((p) => ({
      label: label(p),
      values: [
        { value: p.profile.devices[0]?.matmulTflops.fp32 ?? null, color: COLORS.fp32 },
        { value: p.profile.devices[0] ? tensorBest(p.profile.devices[0]) : null, color: COLORS.tensor },
      ],
    })),
    [0.001, 2000],
  );
  y = logPanel(
    shapes,
    y + 10,
    'Memory bandwidth GB/s per device (log scale)',
    input.providers.map((p) => ({
      label: label(p),
      values: [{ value: p.profile.devices[0]?.memoryBandwidthGBps ?? null, color: COLORS.memory }],
    })),
    [1, 10000],
  );
  const net = input.network;
  if (net !== null && net.hosts.length > 0) {
    y += 10;
    shapes.push({
      kind: 'text',
      x: 20,
      y,
      text: 'Network coordinates (ms), lines: measured links',
      scale: 2,
      fill: COLORS.text,
      anchor: 'start',
    });
    y += 28;
    const box = { x: 250, y, w: 700, h: 320 };
    const xs = net.hosts.map((h) => h.x);
    const ys = net.hosts.map((h) => h.y);
    const [minX, maxX, minY, maxY] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
    const span = Math.max(maxX - minX, maxY - minY, 1);
    const px = (x: number) => box.x + 20 + ((x - minX) / span) * (box.h - 40);
    const py = (v: number) => box.y + 20 + ((v - minY) / span) * (box.h - 40);
    shapes.push({ kind: 'line', x1: box.x, y1: box.y, x2: box.x, y2: box.y + box.h, stroke: COLORS.axis });
    shapes.push({
      kind: 'line',
      x1: box.x,
      y1: box.y + box.h,
      x2: box.x + box.w,
      y2: box.y + box.h,
      stroke: COLORS.axis,
    });
    const at = new Map(net.hosts.map((h) => [h.id, h]));
    for (const l of net.links) {
      const a = at.get(l.a);
      const b = at.get(l.b);
      if (a && b)
        shapes.push({
          kind: 'line',
          x1: px(a.x),
          y1: py(a.y),
          x2: px(b.x),
          y2: py(b.y),
          stroke: COLORS.grid,
        });
    }
    const sites = [...new Set(net.hosts.map((h) => h.site))];
    // Hosts of one LAN sit on top of each other: one label per cluster of points.
    const labels: { x: number; y: number; ids: string[] }[] = [];
    for (const h of net.hosts) {
      const color = SITE_COLORS[sites.indexOf(h.site) % SITE_COLORS.length]!;
      shapes.push({ kind: 'circle', cx: px(h.x), cy: py(h.y), r: 5, fill: color });
      const near = labels.find((l) => Math.hypot(l.x - px(h.x), l.y - py(h.y)) < 12);
      if (near) near.ids.push(h.id);
      else labels.push({ x: px(h.x), y: py(h.y), ids: [h.id] });
    }
    for (const l of labels)
      shapes.push({
        kind: 'text',
        x: l.x + 9,
        y: l.y - 4,
        text: l.ids.join(' '),
        scale: 1,
        fill: COLORS.text,
        anchor: 'start',
      });
    const scaleMs = span / 1000;
    shapes.push({
      kind: 'text',
      x: box.x + box.w,
      y: box.y + box.h + 6,
      text: `square side = ${fmt(scaleMs)} ms`,
      scale: 1,
      fill: COLORS.axis,
      anchor: 'end',
    });
    if (net.accuracy)
      shapes.push({
        kind: 'text',
        x: 20,
        y: box.y + 10,
        text: `probed ${net.accuracy.probedPairs}/${net.accuracy.pairs} pairs`,
        scale: 1,
        fill: COLORS.text,
        anchor: 'start',
      });
    if (net.accuracy)
      shapes.push({
        kind: 'text',
        x: 20,
        y: box.y + 24,
        text: `median RTT error, unprobed: ${(net.accuracy.medianRttError * 100).toFixed(1)}%`,
        scale: 1,
        fill: COLORS.text,
        anchor: 'start',
      });
    if (net.accuracy && net.accuracy.maxThroughputError !== null)
      shapes.push({
        kind: 'text',
        x: 20,
        y: box.y + 38,
        text: `throughput error max: ${(net.accuracy.maxThroughputError * 100).toFixed(1)}%`,
        scale: 1,
        fill: COLORS.text,
        anchor: 'start',
      });
    y = box.y + box.h + 30;
  }
  return { width: 1000, height: y + 10, background: '#ffffff', shapes };
};
