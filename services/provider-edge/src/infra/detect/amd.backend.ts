import type { BackendResult } from '../../domain/detection/detection.types';
import {
  parseRocmSmiJson,
  parseRocmTopology,
  parseRocmVersion,
  ROCM_SMI_ARGS,
  ROCM_SMI_TOPOLOGY_ARGS,
} from '../../domain/detection/rocm-smi.parser';
import type { CommandRunner } from '../command-runner';
import { describeProblems } from './nvidia.backend';

/**
 * AMD detection through `rocm-smi --json`, independent of NVIDIA detection (NuNet DMS once missed
 * AMD cards whenever an NVIDIA one was present). The ROCm version comes from `/opt/rocm/.info/version`.
 */
export const detectAmd = async (
  run: CommandRunner,
  readText: (path: string) => Promise<string | undefined>,
): Promise<BackendResult> => {
  const empty = { gpus: [], links: [], problems: [] };
  const smi = await run('rocm-smi', ROCM_SMI_ARGS);
  if (!smi.found) return { name: 'amd', status: 'absent', detail: smi.error, ...empty };
  const words = `${smi.stdout}\n${smi.stderr}`;
  if (/No AMD GPUs specified|No GPUs? (were )?found/i.test(words) && !smi.stdout.trim().startsWith('{'))
    return { name: 'amd', status: 'absent', detail: 'no AMD GPU', ...empty };
  if (smi.code !== 0 && !smi.stdout.trim().startsWith('{'))
    return {
      name: 'amd',
      status: 'failed',
      detail: words.trim().slice(0, 1024) || `exit ${smi.code}`,
      ...empty,
    };
  const versionText = (await readText('/opt/rocm/.info/version')) ?? '';
  const parsed = parseRocmSmiJson(smi.stdout, parseRocmVersion(versionText));
  const problems = [...parsed.problems];
  let links: BackendResult['links'] = [];
  if (parsed.value.length > 1) {
    const topo = await run('rocm-smi', ROCM_SMI_TOPOLOGY_ARGS);
    if (topo.found && topo.code === 0) {
      const t = parseRocmTopology(topo.stdout);
      problems.push(...t.problems);
      links = t.value;
    }
  }
  const gpus = parsed.value;
  const status = gpus.length === 0 && problems.length > 0 ? 'failed' : gpus.length === 0 ? 'absent' : 'ok';
  return { name: 'amd', status, detail: describeProblems(problems), gpus, links, problems };
};
