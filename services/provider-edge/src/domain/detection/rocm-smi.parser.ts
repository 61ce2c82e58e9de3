import type { GpuLink } from '@gpunet/contracts';
import { type DetectedGpu, isNotAvailable, type Parsed, type ParseProblem } from './detection.types';

/**
 * The `rocm-smi` arguments the edge runs: product name (with the gfx target), VRAM, PCI bus, unique id,
 * driver version, in JSON. Only `vram` is asked for: the CPU-visible BAR window (`vis_vram`, often
 * 256 MiB) is not the card's memory — reporting it was NuNet DMS #364.
 */
export const ROCM_SMI_ARGS = [
  '--showproductname',
  '--showmeminfo',
  'vram',
  '--showbus',
  '--showuniqueid',
  '--showdriverversion',
  '--json',
] as const;
export const ROCM_SMI_TOPOLOGY_ARGS = ['--showtopotype', '--json'] as const;

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A key of a card's object, case- and spacing-insensitively (rocm-smi versions spell them differently). */
const lookup = (card: Record<string, unknown>, ...names: string[]): string | null => {
  const wanted = names.map(normalizeKey);
  for (const [key, value] of Object.entries(card)) {
    if (wanted.includes(normalizeKey(key)) && typeof value === 'string' && !isNotAvailable(value))
      return value.trim();
  }
  return null;
};
const normalizeKey = (key: string): string =>
  key
    .toLowerCase()
    .replace(/[\s_]+/g, ' ')
    .trim();

const safeJson = (text: string): { value: unknown } | { error: string } => {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
};

/**
 * Parses `rocm-smi … --json` (ROCm 5 and 6 spellings: `Card series` / `Card Series`, …): one entry per
 * `cardN`. VRAM comes from `VRAM Total Memory (B)` only, never `VIS_VRAM`. A card without a unique id
 * (consumer parts say `N/A`) gets a stable id from its PCI address. Never throws.
 */
export const parseRocmSmiJson = (
  output: string,
  rocmVersion: string | null = null,
): Parsed<DetectedGpu[]> => {
  const problems: ParseProblem[] = [];
  const parsed = safeJson(output);
  if ('error' in parsed)
    return { value: [], problems: [{ line: 0, field: null, message: `not JSON: ${parsed.error}` }] };
  if (!isRecord(parsed.value))
    return { value: [], problems: [{ line: 0, field: null, message: 'expected a JSON object of cards' }] };
  const root = parsed.value;
  const system = isRecord(root['system']) ? root['system'] : {};
  const driverVersion = lookup(system, 'Driver version');
  const gpus: DetectedGpu[] = [];
  const seen = new Set<string>();
  for (const [key, card] of Object.entries(root)) {
    const m = /^card([0-9]{1,4})$/.exec(key);
    if (!m) continue;
    const index = Number(m[1]);
    const problem = (field: string | null, message: string) =>
      problems.push({ line: 0, field: field === null ? key : `${key}.${field}`, message });
    if (!isRecord(card) || index > 1023) {
      problem(null, 'not a card object');
      continue;
    }
    const model = lookup(card, 'Card Series', 'Card series', 'Device Name', 'Card SKU', 'Card model');
    if (model === null || model.length > 128) {
      problem('Card Series', 'no usable product name');
      continue;
    }
    const vramText = lookup(card, 'VRAM Total Memory (B)');
    const vram = vramText !== null && /^[0-9]{1,16}$/.test(vramText) ? Number(vramText) : null;
    if (vram === null) problem('VRAM Total Memory (B)', `card ${index}: no VRAM total; reported as 0`);
    const pciBusId = lookup(card, 'PCI Bus');
    const uniqueId = lookup(card, 'Unique ID');
    const uuid =
      uniqueId !== null && /^0x[0-9a-fA-F]{1,32}$/.test(uniqueId)
        ? `AMD-${uniqueId.toLowerCase()}`
        : pciBusId !== null && /^[0-9A-Fa-f:.]{1,32}$/.test(pciBusId)
          ? `AMD-PCI-${pciBusId.toLowerCase()}`
          : null;
    if (uuid === null) {
      problem('Unique ID', `card ${index}: neither a unique id nor a PCI address to identify it`);
      continue;
    }
    if (seen.has(uuid)) {
      problem('Unique ID', `card ${index}: id ${uuid} reported twice`);
      continue;
    }
    seen.add(uuid);
    const gfx = lookup(card, 'GFX Version', 'gfx version');
    gpus.push({
      index,
      uuid,
      vendor: 'amd',
      model,
      vramBytes: vram ?? 0,
      driverVersion: driverVersion !== null && driverVersion.length <= 64 ? driverVersion : null,
      cudaVersion: null,
      computeCapability: null,
      rocmVersion,
      architecture: gfx !== null && /^gfx[0-9a-f]{2,5}$/i.test(gfx) ? gfx.toLowerCase() : null,
      pciBusId: pciBusId !== null && pciBusId.length <= 32 ? pciBusId : null,
      mig: { enabled: false, devices: [] },
      utilizationPercent: null,
    });
  }
  if (gpus.length === 0 && problems.length === 0 && Object.keys(root).some((k) => k.startsWith('card')))
    problems.push({ line: 0, field: null, message: 'cards listed but none readable' });
  return { value: gpus.sort((a, b) => a.index - b.index), problems };
};

/** Parses `rocm-smi --showtopotype --json`: `(Topology) Link type between DRM devices A and B`: `XGMI` | `PCIE`. */
export const parseRocmTopology = (output: string): Parsed<GpuLink[]> => {
  const parsed = safeJson(output);
  if ('error' in parsed)
    return { value: [], problems: [{ line: 0, field: null, message: `not JSON: ${parsed.error}` }] };
  const problems: ParseProblem[] = [];
  const links = new Map<string, GpuLink>();
  const visit = (obj: Record<string, unknown>): void => {
    for (const [key, value] of Object.entries(obj)) {
      if (isRecord(value)) {
        visit(value);
        continue;
      }
      const m = /link type between (?:drm )?devices ([0-9]{1,4}) and ([0-9]{1,4})/i.exec(key);
      if (!m || typeof value !== 'string') continue;
      const [x, y] = [Number(m[1]), Number(m[2])];
      if (x === y || x > 1023 || y > 1023) continue;
      const [a, b] = x < y ? [x, y] : [y, x];
      const type = value.trim().toUpperCase();
      const kind: GpuLink['kind'] = type === 'XGMI' ? 'xgmi' : type === 'PCIE' ? 'phb' : 'unknown';
      if (kind === 'unknown')
        problems.push({ line: 0, field: key, message: `unknown link type ${value.slice(0, 16)}` });
      links.set(`${a}-${b}`, { vendor: 'amd', a, b, kind, lanes: null });
    }
  };
  if (isRecord(parsed.value)) visit(parsed.value);
  else problems.push({ line: 0, field: null, message: 'expected a JSON object' });
  return { value: [...links.values()].sort((p, q) => p.a - q.a || p.b - q.b), problems };
};

/** `/opt/rocm/.info/version` (`6.1.2-119`) → `6.1.2`. */
export const parseRocmVersion = (text: string): string | null => {
  const m = /^\s*([0-9]{1,3}\.[0-9]{1,3}(?:\.[0-9]{1,4})?)/.exec(text);
  return m ? m[1]! : null;
};
