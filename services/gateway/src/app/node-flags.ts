/**
 * Node flags the gateway runs with, on node's command line (`NODE_OPTIONS` refuses this V8 flag;
 * the README's "Running"; bench/gateway passes them, as bench/discovery does discovery's).
 * `--no-allocation-site-pretenuring`: under load V8 decided to allocate some hot site's objects
 * straight in the old generation; those short-lived objects stayed there until the next full
 * collection, and every scavenge treated them as roots — the old generation grew ~3 MB per scavenge
 * and scavenges took 10–23 ms, the GET tail of bench/gateway. Without pretenuring a scavenge takes
 * 1–4 ms and the old generation grows ~0.2 MB between two (bench/gateway README, runs 41–44).
 */
export const GATEWAY_NODE_FLAGS = ['--no-allocation-site-pretenuring'] as const;

/** Those of `GATEWAY_NODE_FLAGS` that node's command line (`process.execArgv`) lacks, in either polarity. */
export const missingGatewayNodeFlags = (execArgv: readonly string[]): string[] => {
  const name = (flag: string) =>
    flag
      .split('=')[0]!
      .replaceAll('_', '-')
      .replace(/^--(no-)?/, '');
  const given = new Set(execArgv.map(name));
  return GATEWAY_NODE_FLAGS.filter((flag) => !given.has(name(flag)));
};
