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
    // Fields after the command: state is field 3, utime and stime 14 and 15, cutime and cstime 16 and 17.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = (reaped ? [11, 12, 13, 14] : [11, 12]).reduce((sum, i) => sum + Number(fields[i]), 0);
    total.set(command, sofar + (ticks * 1000) / CLK_TCK);
  }
  return total;
};
