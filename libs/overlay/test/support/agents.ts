import { type Netns, type TestProcess, tsxArgv, tsxEnv } from '@gpunet/netns-testbed';
import { OVERLAY_AGENT_MAIN, OverlayAgentClient } from '../../src';

export interface Agent {
  readonly process: TestProcess;
  readonly client: OverlayAgentClient;
}

/** Starts an overlay agent inside a host's namespace and waits until it reads its stdin. */
export const startAgent = async (ns: Netns, label: string): Promise<Agent> => {
  const process = ns.spawn(label, tsxArgv(OVERLAY_AGENT_MAIN), { env: tsxEnv() });
  const client = new OverlayAgentClient({
    write: (t) => process.write(t),
    onStdout: (l) => process.onStdout(l),
  });
  await process.waitForOutput(/overlay agent ready/, { timeoutMs: 20_000 });
  return { process, client };
};
