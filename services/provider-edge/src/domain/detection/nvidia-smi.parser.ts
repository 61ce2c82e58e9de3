import type { ComputeCapability } from '@gpunet/ensemble-spec';
import type { GpuLink } from '@gpunet/contracts';
import {
  type DetectedGpu,
  isNotAvailable,
  MIB,
  type Parsed,
  type ParseProblem,
  stripAnsi,
} from './detection.types';

/**
 * The `--query-gpu` fields the edge asks for, in this order. `compute_cap` exists from driver 510 on;
 * older drivers reject it and the edge asks again without it (`QUERY_FIELDS_WITHOUT_COMPUTE_CAP`).
 */
export const QUERY_FIELDS = [
  'index',
  'uuid',
  'name',
  'memory.total',
  'driver_version',
  'compute_cap',
  'pci.bus_id',
  'utilization.gpu',
  'mig.mode.current',
] as const;
export type QueryField = (typeof QUERY_FIELDS)[number];
export const QUERY_FIELDS_WITHOUT_COMPUTE_CAP: readonly QueryField[] = QUERY_FIELDS.filter(
  (f) => f !== 'compute_cap',
);

/** What an old driver prints when asked for a field it does not know. */
export const isUnknownFieldError = (output: string): boolean =>
  /Field "[^"]+" is not a valid field to query/.test(output);

const UUID = /^(GPU|MIG)-[A-Za-z0-9-]{1,120}$/;

/**
 * Parses `nvidia-smi --query-gpu=<fields> --format=csv[,noheader][,nounits]`. With a header the
 * columns are found by name (units in brackets are ignored); without one they are `fields` in order.
 * Values the driver cannot give (`[N/A]`, `[Not Supported]`) become null. A row whose index, UUID or
 * name is unusable is left out and reported — never silently dropped. Never throws.
 */
export const parseNvidiaSmiQuery = (
  output: string,
  fields: readonly QueryField[] = QUERY_FIELDS,
): Parsed<DetectedGpu[]> => {
  const problems: ParseProblem[] = [];
  const gpus: DetectedGpu[] = [];
  const lines = output.split(/\r?\n/);
  let columns: readonly string[] = fields;
  const seen = new Set<string>();
  lines.forEach((raw, i) => {
    const line = raw.trim();
    const lineNo = i + 1;
    if (line === '') return;
    const cells = line.split(',').map((c) => c.trim());
    if (cells[0]?.toLowerCase() === 'index') {
      columns = cells.map((c) => c.replace(/\s*\[[^\]]*\]$/, '').toLowerCase());
      return;
    }
    if (cells.length !== columns.length) {
      problems.push({
        line: lineNo,
        field: null,
        message: `expected ${columns.length} comma-separated values, found ${cells.length}`,
      });
      return;
    }
    const cell = (name: QueryField): string | null => {
      const at = columns.indexOf(name);
      if (at < 0) return null;
      const value = cells[at]!;
      return isNotAvailable(value) ? null : value;
    };
    const rowProblem = (field: string, message: string) => problems.push({ line: lineNo, field, message });

    const indexText = cell('index');
    const index = indexText !== null && /^[0-9]{1,4}$/.test(indexText) ? Number(indexText) : NaN;
    if (!(index >= 0 && index <= 1023)) return rowProblem('index', `not a GPU index: ${String(indexText)}`);
    const uuid = cell('uuid');
    if (uuid === null || !UUID.test(uuid))
      return rowProblem('uuid', `GPU ${index}: not a GPU UUID: ${String(uuid)}`);
    if (seen.has(uuid)) return rowProblem('uuid', `GPU ${index}: UUID ${uuid} reported twice`);
    const name = cell('name');
    if (name === null || name.length > 128) return rowProblem('name', `GPU ${index}: no usable name`);
    seen.add(uuid);

    const memory = parseMemoryMib(cell('memory.total'));
    if (memory === undefined)
      rowProblem('memory.total', `GPU ${index}: unreadable memory.total; VRAM reported as 0`);
    const ccText = cell('compute_cap');
    const computeCapability = parseComputeCapability(ccText);
    if (ccText !== null && computeCapability === null)
      rowProblem('compute_cap', `GPU ${index}: unreadable compute capability ${ccText}`);
    const mig = cell('mig.mode.current');
    gpus.push({
      index,
      uuid,
      vendor: 'nvidia',
      model: name,
      vramBytes: (memory ?? 0) * MIB,
      driverVersion: short(cell('driver_version'), 64),
      cudaVersion: null,
      computeCapability,
      rocmVersion: null,
      architecture: null,
      pciBusId: short(cell('pci.bus_id'), 32),
      mig: { enabled: mig?.toLowerCase() === 'enabled', devices: [] },
      utilizationPercent: parsePercent(cell('utilization.gpu')),
    });
  });
  return { value: gpus.sort((a, b) => a.index - b.index), problems };
};

const short = (value: string | null, max: number): string | null =>
  value === null || value.length > max ? null : value;

/** `81559 MiB` or `81559` (nounits) → 81559; `undefined` when unreadable. */
const parseMemoryMib = (value: string | null): number | undefined => {
  if (value === null) return undefined;
  const m = /^([0-9]{1,9})(?:\s*MiB)?$/i.exec(value);
  return m ? Number(m[1]) : undefined;
};

const parsePercent = (value: string | null): number | null => {
  if (value === null) return null;
  const m = /^([0-9]{1,3})(?:\s*%)?$/.exec(value);
  const n = m ? Number(m[1]) : NaN;
  return n >= 0 && n <= 100 ? n : null;
};

export const parseComputeCapability = (value: string | null): ComputeCapability | null => {
  if (value === null) return null;
  const m = /^([1-9][0-9]?)\.([0-9])$/.exec(value.trim());
  return m ? { major: Number(m[1]), minor: Number(m[2]) } : null;
};

/**
 * The CUDA version the driver supports, from `nvidia-smi -q` (`CUDA Version : 12.4`) or the banner of
 * plain `nvidia-smi` (`CUDA Version: 12.4`). null when absent or `[N/A]`.
 */
export const parseCudaVersion = (output: string): string | null => {
  const m = /CUDA Version\s*:\s*([0-9]{1,3}\.[0-9]{1,3}(?:\.[0-9]{1,3})?)/.exec(output);
  return m ? m[1]! : null;
};

/**
 * `nvidia-smi -L`: each GPU line, and under a GPU in MIG mode its instances
 * (`  MIG 3g.40gb     Device  0: (UUID: MIG-…)`). Returns the MIG devices per GPU UUID.
 */
export const parseNvidiaSmiList = (
  output: string,
): Parsed<Map<string, { uuid: string; profile: string }[]>> => {
  const devices = new Map<string, { uuid: string; profile: string }[]>();
  const problems: ParseProblem[] = [];
  let current: string | undefined;
  output.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '') return;
    const gpu = /^GPU\s+[0-9]+:.*\(UUID:\s*(GPU-[A-Za-z0-9-]+)\)$/.exec(line);
    if (gpu) {
      current = gpu[1]!;
      devices.set(current, []);
      return;
    }
    const mig = /^MIG\s+(\S{1,32})\s+Device\s+[0-9]+:\s*\(UUID:\s*(MIG-[A-Za-z0-9/-]{1,120})\)$/.exec(line);
    if (mig && current !== undefined) {
      const list = devices.get(current)!;
      if (list.length < 7) list.push({ profile: mig[1]!, uuid: mig[2]! });
      return;
    }
    problems.push({ line: i + 1, field: null, message: `unrecognised line: ${line.slice(0, 80)}` });
  });
  return { value: devices, problems };
};

/** A GPU's NUMA node from the topology matrix; null when unknown. */
export type NumaAffinity = ReadonlyMap<number, number | null>;

/**
 * Parses the matrix of `nvidia-smi topo -m`: the link between every pair of GPUs (`NV#` = # bonded
 * NVLinks; `PIX`, `PXB`, `PHB`, `NODE`, `SYS` = PCIe paths from nearest to farthest; `SOC` is the old
 * name of `SYS`). NIC columns, affinities and the legend are ignored. Never throws.
 */
export const parseNvidiaTopology = (output: string): Parsed<GpuLink[]> => {
  const problems: ParseProblem[] = [];
  const lines = stripAnsi(output).split(/\r?\n/);
  const headerAt = lines.findIndex((l) => /(^|\t)\s*GPU0\s*(\t|$)/.test(l) && !/^GPU[0-9]/.test(l));
  if (headerAt < 0) {
    if (output.trim() !== '')
      problems.push({ line: 0, field: null, message: 'no GPU0 header in topology output' });
    return { value: [], problems };
  }
  const header = lines[headerAt]!.split('\t').map((c) => c.trim());
  const gpuColumn = new Map<number, number>();
  header.forEach((name, col) => {
    const m = /^GPU([0-9]{1,4})$/.exec(name);
    if (m) gpuColumn.set(Number(m[1]), col);
  });
  const links = new Map<string, GpuLink>();
  for (let i = headerAt + 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^\s*(Legend|NIC Legend)\s*:/.test(line)) break;
    const cells = line.split('\t').map((c) => c.trim());
    const row = /^GPU([0-9]{1,4})$/.exec(cells[0] ?? '');
    if (!row) continue;
    const a = Number(row[1]);
    for (const [b, col] of gpuColumn) {
      if (b <= a || a > 1023 || b > 1023) continue;
      const value = cells[col];
      if (value === undefined) {
        problems.push({ line: i + 1, field: `GPU${b}`, message: `GPU${a} row has no GPU${b} column` });
        continue;
      }
      const link = linkOf(a, b, value);
      if (link.kind === 'unknown')
        problems.push({ line: i + 1, field: `GPU${b}`, message: `unknown link type ${value.slice(0, 16)}` });
      links.set(`${a}-${b}`, link);
    }
  }
  return { value: [...links.values()].sort((x, y) => x.a - y.a || x.b - y.b), problems };
};

const linkOf = (a: number, b: number, value: string): GpuLink => {
  const nv = /^NV([0-9]{1,2})$/.exec(value);
  if (nv && Number(nv[1]) >= 1) return { vendor: 'nvidia', a, b, kind: 'nvlink', lanes: Number(nv[1]) };
  const pcie: Record<string, GpuLink['kind']> = {
    PIX: 'pix',
    PXB: 'pxb',
    PHB: 'phb',
    NODE: 'node',
    SYS: 'sys',
    SOC: 'sys',
  };
  return { vendor: 'nvidia', a, b, kind: pcie[value] ?? 'unknown', lanes: null };
};
