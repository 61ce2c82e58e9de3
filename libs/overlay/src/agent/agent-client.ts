import type { EdgePathReport, OverlayPeer } from '@gpunet/contracts';
import type { AttachOverlayOptions, ConnectPeersOptions } from '../edge/job-overlay';
import type {
  AgentAttachResult,
  AgentMethod,
  AgentMethods,
  AgentRequest,
  AgentResponse,
  AgentStatus,
} from './agent-protocol';

/** The agent answered a call with an error. */
export class AgentCallError extends Error {
  override readonly name = 'AgentCallError';
  readonly code = 'AGENT_CALL_FAILED' as const;
  constructor(
    readonly method: string,
    readonly remote: { name: string; code?: string; message: string },
  ) {
    super(`${method}: ${remote.name}${remote.code ? ` (${remote.code})` : ''}: ${remote.message}`);
  }
}

/** How the client talks to an agent process: write to its stdin, listen to its stdout. */
export interface AgentTransport {
  write(text: string): void;
  onStdout(listener: (chunk: string) => void): () => void;
}

/** Calls an overlay agent (`src/agent/main.ts`) over its stdio. */
export class OverlayAgentClient {
  #nextId = 1;
  #buffer = '';
  readonly #pending = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void; method: string }
  >();

  constructor(private readonly transport: AgentTransport) {
    transport.onStdout((chunk) => {
      this.#buffer += chunk;
      let newline: number;
      while ((newline = this.#buffer.indexOf('\n')) >= 0) {
        const line = this.#buffer.slice(0, newline).trim();
        this.#buffer = this.#buffer.slice(newline + 1);
        if (!line.startsWith('{')) continue;
        const response = JSON.parse(line) as AgentResponse;
        const pending = this.#pending.get(response.id);
        if (!pending) continue;
        this.#pending.delete(response.id);
        if ('error' in response) pending.reject(new AgentCallError(pending.method, response.error));
        else pending.resolve(response.result);
      }
    });
  }

  call<M extends AgentMethod>(
    method: M,
    params: AgentMethods[M]['params'],
    timeoutMs = 30_000,
  ): Promise<AgentMethods[M]['result']> {
    const id = this.#nextId++;
    const request: AgentRequest = { id, method, params };
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`agent did not answer ${method} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, {
        method,
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value as AgentMethods[M]['result']);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      this.transport.write(`${JSON.stringify(request)}\n`);
    });
  }

  attach(options: Omit<AttachOverlayOptions, 'log'>): Promise<AgentAttachResult> {
    return this.call('attach', options);
  }
  connectPeers(peers: OverlayPeer[], options?: ConnectPeersOptions): Promise<EdgePathReport> {
    return this.call('connectPeers', { peers, ...(options ? { options } : {}) });
  }
  pathReport(): Promise<EdgePathReport> {
    return this.call('pathReport', {});
  }
  status(): Promise<AgentStatus> {
    return this.call('status', {});
  }
  detach(): Promise<null> {
    return this.call('detach', {});
  }
}
