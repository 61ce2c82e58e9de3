import { run } from './command';

/** The machine cannot run namespace tests (not root, no `ip netns`, a tool missing). */
export class TestbedUnavailableError extends Error {
  override readonly name = 'TestbedUnavailableError';
  readonly code = 'TESTBED_UNAVAILABLE' as const;
}

const isCi = (): boolean => {
  const ci = process.env['CI'];
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
};

const which = async (tool: string): Promise<boolean> =>
  (await run(['sh', '-c', `command -v ${tool}`], { allowFailure: true })).status === 0;

/**
 * Whether namespace tests can run here: root, `ip netns`, `iptables` and the given tools
 * (`wireguard-go`, `iperf3`, …; `scripts/ensure-services.sh` installs them). When they cannot, it
 * throws under `CI` (a pipeline must not go green by skipping) and otherwise warns loudly and
 * returns `false`, for `describe.skipIf(!ok)`.
 */
export const requireTestbed = async (suite: string, tools: readonly string[] = []): Promise<boolean> => {
  const missing: string[] = [];
  if (process.getuid?.() !== 0) missing.push('root');
  for (const tool of ['ip', 'iptables', ...tools]) if (!(await which(tool))) missing.push(tool);
  if (missing.length === 0) {
    const probe = await run(['ip', 'netns', 'list'], { allowFailure: true });
    if (probe.status !== 0) missing.push(`ip netns (${probe.stderr.trim()})`);
  }
  if (missing.length === 0) return true;
  const why = `${suite}: the namespace testbed needs ${missing.join(', ')} (run scripts/ensure-services.sh as root).`;
  if (isCi()) throw new TestbedUnavailableError(`${why} CI is set, so the suite fails instead of skipping.`);
  console.warn(`\n${'!'.repeat(100)}\n!! SKIPPING ${why}\n${'!'.repeat(100)}\n`);
  return false;
};
