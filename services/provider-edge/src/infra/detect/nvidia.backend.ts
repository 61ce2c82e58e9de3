import type { BackendResult, DetectedGpu, ParseProblem } from '../../domain/detection/detection.types';
import {
  isUnknownFieldError,
  parseCudaVersion,
  parseNvidiaSmiList,
  parseNvidiaSmiQuery,
  parseNvidiaTopology,
  QUERY_FIELDS,
  QUERY_FIELDS_WITHOUT_COMPUTE_CAP,
  type QueryField,
} from '../../domain/detection/nvidia-smi.parser';
import type { CommandRunner } from '../command-runner';

const NVIDIA_SMI = 'nvidia-smi';

const queryArgs = (fields: readonly QueryField[]) => [`--query-gpu=${fields.join(',')}`, '--format=csv'];

export const describeProblems = (problems: readonly ParseProblem[]): string | null =>
  problems.length === 0
    ? null
    : problems
        .slice(0, 8)
        .map((p) => `${p.line > 0 ? `line ${p.line}: ` : ''}${p.field ? `${p.field}: ` : ''}${p.message}`)
        .join('; ');

/**
 * NVIDIA detection through `nvidia-smi`: the GPU query (retried without `compute_cap` on drivers
 * older than 510), the CUDA version from `-q`, MIG instances from `-L` and the topology from
 * `topo -m`. Absent when nvidia-smi is not installed; failed (with the tool's words) when it is but
 * cannot talk to the driver. Problems with single rows are reported in `detail`, never dropped.
 */
export const detectNvidia = async (run: CommandRunner): Promise<BackendResult> => {
  const empty = { gpus: [], links: [], problems: [] };
  let fields: readonly QueryField[] = QUERY_FIELDS;
  let query = await run(NVIDIA_SMI, queryArgs(fields));
  if (!query.found) return { name: 'nvidia', status: 'absent', detail: query.error, ...empty };
  if (query.code !== 0 && isUnknownFieldError(query.stdout + query.stderr)) {
    fields = QUERY_FIELDS_WITHOUT_COMPUTE_CAP;
    query = await run(NVIDIA_SMI, queryArgs(fields));
    if (!query.found) return { name: 'nvidia', status: 'absent', detail: query.error, ...empty };
  }
  if (query.code !== 0) {
    const words = `${query.stdout}\n${query.stderr}`.trim();
    if (/No devices were found/i.test(words))
      return { name: 'nvidia', status: 'absent', detail: 'no NVIDIA GPU', ...empty };
    return {
      name: 'nvidia',
      status: 'failed',
      detail: words.slice(0, 1024) || `exit ${query.code}`,
      ...empty,
    };
  }
  const parsed = parseNvidiaSmiQuery(query.stdout, fields);
  const problems: ParseProblem[] = [...parsed.problems];
  let gpus: DetectedGpu[] = parsed.value;

  const compute = await run(NVIDIA_SMI, ['-q', '-d', 'COMPUTE']);
  const cudaVersion = compute.found && compute.code === 0 ? parseCudaVersion(compute.stdout) : null;
  if (cudaVersion === null)
    problems.push({ line: 0, field: 'CUDA Version', message: 'nvidia-smi -q did not say the CUDA version' });
  gpus = gpus.map((g) => ({ ...g, cudaVersion }));

  if (gpus.some((g) => g.mig.enabled)) {
    const list = await run(NVIDIA_SMI, ['-L']);
    if (list.found && list.code === 0) {
      const mig = parseNvidiaSmiList(list.stdout);
      problems.push(...mig.problems);
      gpus = gpus.map((g) =>
        g.mig.enabled ? { ...g, mig: { enabled: true, devices: mig.value.get(g.uuid) ?? [] } } : g,
      );
    }
  }

  let links: BackendResult['links'] = [];
  if (gpus.length > 1) {
    const topo = await run(NVIDIA_SMI, ['topo', '-m']);
    if (topo.found && topo.code === 0) {
      const parsedTopo = parseNvidiaTopology(topo.stdout);
      problems.push(...parsedTopo.problems);
      links = parsedTopo.value;
    } else problems.push({ line: 0, field: 'topo', message: 'nvidia-smi topo -m failed; topology unknown' });
  }
  const status = gpus.length === 0 && problems.length > 0 ? 'failed' : gpus.length === 0 ? 'absent' : 'ok';
  return { name: 'nvidia', status, detail: describeProblems(problems), gpus, links, problems };
};
