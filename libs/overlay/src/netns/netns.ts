import { runCommand } from '../run-command';

/**
 * A network namespace to put a job's interface in: a named one (`ip netns add`, our testbed) or a
 * process's (a container's init: `/proc/<pid>/ns/net`).
 */
export type NetnsRef = { readonly name: string } | { readonly pid: number };

const describe = (ns: NetnsRef) => ('name' in ns ? ns.name : `/proc/${ns.pid}/ns/net`);

/** argv prefix that runs a command inside `ns`. */
export const inNetns = (ns: NetnsRef): string[] =>
  'name' in ns ? ['ip', 'netns', 'exec', ns.name] : ['nsenter', `--net=/proc/${ns.pid}/ns/net`];

/** `ip <args>` inside `ns`. */
export const ipIn = (ns: NetnsRef, args: readonly string[]): Promise<string> =>
  runCommand('name' in ns ? ['ip', '-n', ns.name, ...args] : [...inNetns(ns), 'ip', ...args]);

/** Moves a link of the current namespace into `ns` (it arrives down). */
export const moveLink = async (ifname: string, ns: NetnsRef): Promise<void> => {
  await runCommand(['ip', 'link', 'set', 'dev', ifname, 'netns', 'name' in ns ? ns.name : String(ns.pid)]);
};

/**
 * Gives the moved interface its name, MTU and overlay address inside `ns` and brings it up. The
 * route to the job network comes with the address's prefix; no default route is added, so the rank
 * reaches its job's peers and nothing else through it.
 */
export const configureRankInterface = async (
  ns: NetnsRef,
  options: { ifname: string; name: string; address: string; prefixLength: number; mtu: number },
): Promise<void> => {
  if (options.name !== options.ifname)
    await ipIn(ns, ['link', 'set', 'dev', options.ifname, 'name', options.name]);
  await ipIn(ns, ['link', 'set', 'dev', options.name, 'mtu', String(options.mtu)]);
  await ipIn(ns, ['addr', 'add', `${options.address}/${options.prefixLength}`, 'dev', options.name]);
  await ipIn(ns, ['link', 'set', 'dev', options.name, 'up']);
  await ipIn(ns, ['link', 'set', 'dev', 'lo', 'up']);
};

export const netnsDescription = describe;
