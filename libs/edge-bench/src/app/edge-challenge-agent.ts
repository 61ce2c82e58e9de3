import {
  type ChallengeCommitReply,
  type ChallengeOpenReply,
  createRegistry,
  OpenChallengeOnEdge,
  type PayloadOf,
  RunChallengeOnEdge,
} from '@gpunet/contracts';
import type { Msg, NatsConnection, Subscription } from '@nats-io/nats-core';
import {
  type ChallengeDevice,
  type ChallengeWorker,
  type ChallengeWorkerFailure,
  type ChallengeWorkerOptions,
  spawnChallengeWorker,
} from '../infra/challenge-worker';

export type ChallengeRequest = PayloadOf<typeof RunChallengeOnEdge>;
export type ChallengeOpenRequest = PayloadOf<typeof OpenChallengeOnEdge>;
type DeclineCode = Extract<ChallengeCommitReply, { outcome: 'declined' }>['code'];

/** What the agent did with one request (logs, tests). */
export type ChallengeAgentEvent =
  | {
      readonly type: 'committed';
      readonly challengeId: string;
      readonly edgeComputeMs: number;
      readonly device: string;
    }
  | { readonly type: 'opened'; readonly challengeId: string; readonly rows: number }
  | {
      readonly type: 'declined';
      readonly challengeId: string;
      readonly code: DeclineCode;
      readonly message: string;
    }
  /** No commitment was sent: the deadline passed (the worker stopped), or the worker failed. */
  | { readonly type: 'gave-up'; readonly challengeId: string; readonly reason: string };

export interface EdgeChallengeAgentOptions {
  readonly edgeId: string;
  readonly nc: NatsConnection;
  /** Subject namespace (tests). Default ''. */
  readonly prefix?: string;
  /** The edge's GPUs as its inventory names them: uuid and vendor index (nvidia-smi's numbering). */
  readonly gpus: () => readonly { readonly uuid: string; readonly index: number }[];
  /** A simulated inventory: every challenge is declined `SIMULATED` and no worker ever starts. */
  readonly simulated: () => boolean;
  /** Computes the challenges. Default: `spawnChallengeWorker(workerOptions)`, started on first use. */
  readonly worker?: ChallengeWorker;
  readonly workerOptions?: ChallengeWorkerOptions;
  /** Start the worker and initialise every GPU at `start()` rather than on the first challenge. Default false. */
  readonly warm?: boolean;
  readonly onEvent?: (event: ChallengeAgentEvent) => void;
  readonly onError?: (error: unknown, context: string) => void;
}

const commands = createRegistry([RunChallengeOnEdge, OpenChallengeOnEdge]);

const WORKER_DECLINES: Partial<Record<ChallengeWorkerFailure['code'], DeclineCode>> = {
  INVALID_REQUEST: 'INVALID_REQUEST',
  UNKNOWN_DEVICE: 'UNKNOWN_GPU',
  UNSUPPORTED_DTYPE: 'UNSUPPORTED_DTYPE',
  UNKNOWN_CHALLENGE: 'UNKNOWN_CHALLENGE',
};

/** The challenge id of a request that did not validate, when it has one of the contract's form. */
const idOf = (raw: unknown): string => {
  const id = (raw as { data?: { challengeId?: unknown } } | null)?.data?.challengeId;
  return typeof id === 'string' && /^[A-Za-z0-9_-]{1,128}$/.test(id) ? id : 'unknown';
};

/**
 * The edge side of a GPU challenge (ADR 0070): answers `cmd.edge.{edgeId}.challenge.v1` with the
 * Merkle root of the seeded product computed on the named GPU, and `…challenge-open.v1` with the
 * asked rows, their proofs and C·r. One challenge at a time (another is declined `BUSY`); a
 * simulated edge declines `SIMULATED`. When the deadline passes the worker stops and the agent sends
 * nothing: the verifier records the missing commitment on its own clock, which is the evidence
 * (a reply could only be a false `declined` code). provider-edge mounts it beside the benchmark agent.
 */
export class EdgeChallengeAgent {
  private subscriptions: Subscription[] = [];
  private running = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly worker: ChallengeWorker | undefined;

  constructor(private readonly options: EdgeChallengeAgentOptions) {
    this.worker = options.simulated()
      ? undefined
      : (options.worker ?? spawnChallengeWorker(options.workerOptions));
  }

  start(): void {
    const prefix = this.options.prefix ?? '';
    const edgeId = this.options.edgeId;
    this.subscriptions = [RunChallengeOnEdge, OpenChallengeOnEdge].map((def) =>
      this.options.nc.subscribe(def.subject({ edgeId }, prefix), { callback: (_e, m) => this.onCommand(m) }),
    );
    if (this.options.warm && this.worker) {
      const devices = this.options.gpus().map((g) => ({ index: g.index, uuid: g.uuid }));
      this.track(
        this.worker
          .warm(devices)
          .catch((error: unknown) => this.options.onError?.(error, 'challenge worker warm-up')),
      );
    }
  }

  /** Stops answering, waits for the challenge in hand, and ends the worker. */
  async stop(): Promise<void> {
    for (const s of this.subscriptions) s.unsubscribe();
    this.subscriptions = [];
    await this.idle();
    await this.worker?.close();
  }

  /** Settles when the requests accepted so far are answered (tests). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private track(work: Promise<void>): void {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }

  private onCommand(msg: Msg): void {
    let envelope;
    let raw: unknown;
    try {
      raw = msg.json();
      envelope = commands.parse(raw);
    } catch (error) {
      this.decline(msg, idOf(raw), 'INVALID_REQUEST', String(error));
      return;
    }
    const challengeId = envelope.data.challengeId;
    if (this.options.simulated() || !this.worker) {
      this.decline(
        msg,
        challengeId,
        'SIMULATED',
        'simulated GPUs are declared, not computed on: never challenged',
      );
      return;
    }
    if (this.running) {
      this.decline(msg, challengeId, 'BUSY', 'another challenge is running on this edge');
      return;
    }
    if (envelope.type === RunChallengeOnEdge.type) {
      const request = envelope.data;
      const gpu = this.options.gpus().find((g) => g.uuid === request.gpuUuid);
      if (!gpu) {
        this.decline(
          msg,
          challengeId,
          'UNKNOWN_GPU',
          `gpuUuid: ${request.gpuUuid} is not a GPU of this edge`,
        );
        return;
      }
      if (request.n % 16 !== 0) {
        this.decline(msg, challengeId, 'INVALID_REQUEST', `n: must be a multiple of 16, not ${request.n}`);
        return;
      }
      this.run(() => this.commit(msg, request, { index: gpu.index, uuid: gpu.uuid }, this.worker!));
    } else {
      const request = envelope.data;
      if (new Set(request.rows).size !== request.rows.length) {
        this.decline(msg, challengeId, 'INVALID_REQUEST', 'rows: must be distinct');
        return;
      }
      this.run(() => this.open(msg, request, this.worker!));
    }
  }

  private run(work: () => Promise<void>): void {
    this.running = true;
    this.track(
      work()
        .catch((error: unknown) => this.options.onError?.(error, 'challenge'))
        .finally(() => (this.running = false)),
    );
  }

  private async commit(
    msg: Msg,
    request: ChallengeRequest,
    device: ChallengeDevice,
    worker: ChallengeWorker,
  ) {
    const { challengeId } = request;
    let answer;
    try {
      answer = await worker.commit({
        challengeId,
        seed: request.seed,
        n: request.n,
        dtype: request.dtype,
        device,
        deadlineMs: request.deadlineMs,
      });
    } catch (error) {
      this.options.onEvent?.({ type: 'gave-up', challengeId, reason: String(error) });
      return;
    }
    if (answer.ok) {
      this.reply(msg, {
        outcome: 'committed',
        challengeId,
        root: answer.root,
        edgeComputeMs: answer.edgeComputeMs,
      });
      this.options.onEvent?.({
        type: 'committed',
        challengeId,
        edgeComputeMs: answer.edgeComputeMs,
        device: answer.device,
      });
      return;
    }
    const code = WORKER_DECLINES[answer.code];
    if (code) this.decline(msg, challengeId, code, answer.message);
    else
      this.options.onEvent?.({ type: 'gave-up', challengeId, reason: `${answer.code}: ${answer.message}` });
  }

  private async open(msg: Msg, request: ChallengeOpenRequest, worker: ChallengeWorker) {
    const { challengeId } = request;
    let answer;
    try {
      answer = await worker.open({ challengeId, rows: request.rows, freivaldsSeed: request.freivaldsSeed });
    } catch (error) {
      this.options.onEvent?.({ type: 'gave-up', challengeId, reason: String(error) });
      return;
    }
    if (answer.ok) {
      this.reply(msg, { outcome: 'opened', challengeId, rows: answer.rows, product: answer.product });
      this.options.onEvent?.({ type: 'opened', challengeId, rows: answer.rows.length });
      return;
    }
    const code = WORKER_DECLINES[answer.code];
    if (code) this.decline(msg, challengeId, code, answer.message);
    else
      this.options.onEvent?.({ type: 'gave-up', challengeId, reason: `${answer.code}: ${answer.message}` });
  }

  private decline(msg: Msg, challengeId: string, code: DeclineCode, message: string): void {
    this.reply(msg, { outcome: 'declined', challengeId, code, message: message.slice(0, 512) });
    this.options.onEvent?.({ type: 'declined', challengeId, code, message });
  }

  private reply(msg: Msg, reply: ChallengeCommitReply | ChallengeOpenReply): void {
    if (!msg.reply) return;
    try {
      msg.respond(JSON.stringify(reply));
    } catch (error) {
      // An opening larger than the server's max_payload (n = 16 384 with many rows) cannot be sent.
      this.options.onError?.(error, 'challenge reply');
    }
  }
}
