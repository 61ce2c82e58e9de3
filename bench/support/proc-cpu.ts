/**
 * CPU time of processes on this machine, from /proc (Linux), for benchmarks that put the servers
 * they drive (Postgres, NATS) beside their own processes' time.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's CPU times (`getconf CLK_TCK`; 100 on Linux as built). */
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

/**
 * CPU ms used so far by the processes whose command (`/proc/<pid>/stat`'s second field) is one of
 * `commands`, summed per command; zero for a command with no process, and for all of them off Linux.
 * `reaped`: add the time of children each one has reaped, which keeps the time of Postgres backends
 * that exited (the postmaster reaps them) when the reading spans their lives.
 */
export const cpuMsByCommand = (
  commands: readonly string[],
  { reaped = false }: { readonly reaped?: boolean } = {},
): Map<string, number> => {
  const total = new Map(commands.map((c) => [c, 0]));
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return total; // not Linux
  }
  for (const pid of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    const command = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const sofar = total.get(command);
    if (sofar === undefined) continue;
    total.set(command, sofar + statCpuMs(stat, reaped));
  }
  return total;
};

/** CPU ms (user + system) used so far by process `pid`; throws when it does not exist. */
export const cpuMsOfPid = (pid: number): number =>
  statCpuMs(readFileSync(`/proc/${pid}/stat`, 'utf8'), false);

/** The CPU ms in a `/proc/<pid>/stat` line, with its reaped children's when `reaped`. */
const statCpuMs = (stat: string, reaped: boolean): number => {
  // Fields after the command: state is field 3, utime and stime 14 and 15, cutime and cstime 16 and 17.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = (reaped ? [11, 12, 13, 14] : [11, 12]).reduce((sum, i) => sum + Number(fields[i]), 0);
  return (ticks * 1000) / CLK_TCK;
};
