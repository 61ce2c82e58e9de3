import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/*
 * The Alibaba GPU trace (alibaba/clusterdata, cluster-trace-gpu-v2023/csv; Weng et al., "Beware of
 * Fragmentation", USENIX ATC '23). Its owners let it be used for research or study, so the
 * repository does not redistribute it: the benchmarks read the original files from the folder
 * `GPUNET_ALIBABA_TRACE` names, and say so when it is not set.
 */

/** The environment variable naming the folder of the trace's CSV files. */
export const TRACE_ENV = 'GPUNET_ALIBABA_TRACE';
export const NODES_FILE = 'openb_node_list_gpu_node.csv';
export const TASKS_FILE = 'openb_pod_list_gpuspec33.csv';

/** The trace's folder, or why it cannot be read (the sentence a benchmark prints). */
export const traceDir = (): { readonly dir: string } | { readonly missing: string } => {
  const dir = process.env[TRACE_ENV];
  if (dir === undefined || dir === '') {
    return {
      missing: `${TRACE_ENV} is not set: point it at a copy of alibaba/clusterdata's cluster-trace-gpu-v2023/csv folder`,
    };
  }
  for (const f of [NODES_FILE, TASKS_FILE]) {
    if (!existsSync(join(dir, f))) return { missing: `${TRACE_ENV}=${dir} has no ${f}` };
  }
  return { dir };
};

/** A trace file's rows as column → value (the trace has no quoted fields). */
export const traceCsv = (file: typeof NODES_FILE | typeof TASKS_FILE): Record<string, string>[] => {
  const where = traceDir();
  if ('missing' in where) throw new Error(where.missing);
  const [header, ...lines] = readFileSync(join(where.dir, file), 'utf8').trim().split('\n');
  const cols = header!.split(',');
  return lines.map((l) => {
    const cells = l.split(',');
    return Object.fromEntries(cols.map((c, i) => [c, cells[i] ?? '']));
  });
};
