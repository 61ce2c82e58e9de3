import type { z } from 'zod';

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions). */
export const editDistance = (a: string, b: string): number => {
  if (a === b) return 0;
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[] = new Array<number>(rows * cols).fill(0);
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(
        d[(i - 1) * cols + j]! + 1,
        d[i * cols + j - 1]! + 1,
        d[(i - 1) * cols + j - 1]! + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        v = Math.min(v, d[(i - 2) * cols + j - 2]! + 1);
      }
      d[i * cols + j] = v;
    }
  }
  return d[rows * cols - 1]!;
};

const tokens = (s: string): string[] =>
  s
    .toLowerCase()
    .split(/[_\-.\s]+/)
    .filter(Boolean);

/**
 * The candidate a person most likely meant by `input`: a close spelling, or the same words in
 * another order (`vram_min` → `min_vram`). `undefined` when nothing is close.
 */
export const closest = (input: string, candidates: readonly string[]): string | undefined => {
  if (input.length > 64) return undefined;
  const lower = input.toLowerCase();
  const sorted = tokens(input).sort().join('_');
  let best: string | undefined;
  let bestScore = Infinity;
  for (const c of candidates) {
    const cl = c.toLowerCase();
    if (cl === lower) return c;
    if (sorted !== '' && tokens(c).sort().join('_') === sorted) return c;
    const score = editDistance(lower, cl);
    if (score < bestScore) {
      bestScore = score;
      best = c;
    }
  }
  const allowed = Math.max(1, Math.min(3, Math.floor(input.length / 3)));
  return bestScore <= allowed ? best : undefined;
};

/**
 * Field names people bring from NuNet DMS V1 or other schedulers, mapped to gpunet's. Checked before
 * spelling distance, because `vram` is far from `min_vram` by letters but close in meaning.
 */
export const KNOWN_RENAMES: Readonly<Record<string, string>> = {
  vram: 'min_vram',
  memory: 'min_vram',
  min_memory: 'min_vram',
  gpu_memory: 'min_vram',
  model: 'models',
  compute_capability: 'min_compute_capability',
  cuda_version: 'cuda',
  rocm_version: 'rocm',
  tflops: 'min_tflops',
  environment: 'env',
  working_directory: 'working_dir',
  workdir: 'working_dir',
  edges: 'between',
  rtt: 'max_rtt',
  bw: 'min_bandwidth',
  bandwidth: 'min_bandwidth',
  latency: 'max_rtt',
  nodes_max: 'max_nodes',
  nnodes: 'max_nodes',
  world_size: 'ranks',
  nproc_per_node: 'gpus_per_node',
  duration: 'max_duration',
  timeout: 'max_duration',
  price: 'max_price_per_gpu_hour',
  max_price: 'max_price_per_gpu_hour',
  currency: 'asset',
  version: 'apiVersion',
  image_name: 'image',
  command: 'cmd',
  args: 'cmd',
  size_gb: 'size',
  restarts: 'max_restarts',
  retries: 'max_restarts',
};

/** Fields NuNet V1 has that gpunet v1 deliberately does not, with what to do instead. */
export const UNSUPPORTED_FIELDS: Readonly<Record<string, string>> = {
  supervisor: 'supervision trees are not supported; use failure_recovery on each allocation',
  keys: 'SSH/GPG keys are not part of the spec; bake them into the image or pass them as env',
  scripts: 'provisioning scripts are not supported; bake them into the image',
  provision: 'provisioning scripts are not supported; bake them into the image',
  healthcheck: 'health checks are not supported yet; services are restarted when their process exits',
  depends_on: 'start ordering between allocations is not supported yet',
  redundancy: 'use distributed for several ranks, or several allocations',
  exclude_peers: 'use location.reject, or nodes.<n>.peer to pin',
  escalation_strategy: 'use failure_recovery.strategy',
  contract: 'contracts are not part of the spec; use budget and subnet',
  clock_speed: 'clock speed is not a requirement; use gpus.min_tflops for performance',
};

/**
 * The schema at `path` below `root`, looking through optional/default/record/array wrappers; used to
 * list the fields that *are* allowed where an unknown one was found.
 */
export const schemaAt = (root: z.ZodType, path: readonly PropertyKey[]): z.ZodType | undefined => {
  let node: z.ZodType | undefined = unwrap(root);
  for (const key of path) {
    if (node === undefined) return undefined;
    const def = defOf(node);
    switch (def.type) {
      case 'object':
        node = (def.shape as Record<string, z.ZodType>)[String(key)];
        break;
      case 'record':
        node = def.valueType as z.ZodType;
        break;
      case 'array':
        node = def.element as z.ZodType;
        break;
      case 'tuple':
        node = (def.items as z.ZodType[])[Number(key)];
        break;
      default:
        return undefined;
    }
    node = node === undefined ? undefined : unwrap(node);
  }
  return node;
};

interface LooseDef {
  type: string;
  [key: string]: unknown;
}

const defOf = (schema: z.ZodType): LooseDef => (schema as unknown as { _zod: { def: LooseDef } })._zod.def;

const unwrap = (schema: z.ZodType): z.ZodType => {
  let s = schema;
  for (let i = 0; i < 10; i++) {
    const def = defOf(s);
    if (
      def.type === 'optional' ||
      def.type === 'default' ||
      def.type === 'nullable' ||
      def.type === 'prefault'
    ) {
      s = def.innerType as z.ZodType;
    } else if (def.type === 'pipe') {
      s = def.in as z.ZodType;
    } else {
      return s;
    }
  }
  return s;
};

/** The field names of the object schema at `path`, or `[]`. */
export const knownFieldsAt = (root: z.ZodType, path: readonly PropertyKey[]): string[] => {
  const node = schemaAt(root, path);
  if (node === undefined) return [];
  const def = defOf(node);
  return def.type === 'object' ? Object.keys(def.shape as object) : [];
};

/** Every object's fields, by field name → dotted parents, to say where a misplaced field belongs. */
export const fieldIndex = (root: z.ZodType): ReadonlyMap<string, string[]> => {
  const index = new Map<string, string[]>();
  const seen = new Set<z.ZodType>();
  const walk = (schema: z.ZodType, where: string): void => {
    const s = unwrap(schema);
    if (seen.has(s)) return;
    seen.add(s);
    const def = defOf(s);
    if (def.type === 'object') {
      for (const [name, child] of Object.entries(def.shape as Record<string, z.ZodType>)) {
        const list = index.get(name) ?? [];
        list.push(where);
        index.set(name, list);
        walk(child, where === '' ? name : `${where}.${name}`);
      }
    } else if (def.type === 'record') {
      walk(def.valueType as z.ZodType, `${where}.<name>`);
    } else if (def.type === 'array') {
      walk(def.element as z.ZodType, `${where}[]`);
    }
  };
  walk(root, '');
  return index;
};

/** The enum members (or literal) allowed by the schema at `path`, for "did you mean" on values. */
export const allowedValuesAt = (root: z.ZodType, path: readonly PropertyKey[]): string[] => {
  const node = schemaAt(root, path);
  if (node === undefined) return [];
  const def = defOf(node);
  if (def.type === 'enum') return Object.values(def.entries as Record<string, string>);
  if (def.type === 'literal') return (def.values as unknown[]).map(String);
  return [];
};
