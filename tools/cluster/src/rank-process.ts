import { readdirSync, readFileSync } from 'node:fs';

/**
 * The pid of a job's rank process on this machine, found by the environment gpunet gave it
 * (`GPUNET_JOB_ID`, `RANK` and, when `attempt` is given, `GPUNET_ATTEMPT`): for tests and benches
 * that kill or stop a rank of a development cluster, whose edges run ranks as local processes.
 */
export const rankProcessId = (jobId: string, rank: number, attempt?: number): number | undefined => {
  const wanted = [
    `GPUNET_JOB_ID=${jobId}`,
    `RANK=${rank}`,
    ...(attempt === undefined ? [] : [`GPUNET_ATTEMPT=${attempt}`]),
  ];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let env: string[];
    try {
      env = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
    } catch {
      continue; // gone, or not ours to read
    }
    if (wanted.every((w) => env.includes(w))) return Number(entry);
  }
  return undefined;
};
