import {
  buildEnvelope,
  type PayloadOf,
  RankStatusReported,
  ReleaseOnEdge,
  signingInput,
  StartRankOnEdge,
  StopRanksOnEdge,
} from '@gpunet/contracts';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { Msg, NatsConnection, Subscription } from '@nats-io/nats-core';
import { edgeKeyOf } from './edge-keys';

type Status = PayloadOf<typeof RankStatusReported>;
/** A status before it is signed. */
export type UnsignedStatus = Omit<Status, 'publicKey' | 'sequence' | 'signedAt' | 'signature'>;

type StartCommand = PayloadOf<typeof StartRankOnEdge>;

interface TestRank {
  readonly command: StartCommand;
  state: 'running' | 'exited';
  readonly startedAt: string;
}

/**
 * A test double of a provider edge on real NATS: it answers start/stop/release like the real edge
 * (a start is idempotent per (job, attempt, rank): a repeat answers `created: false` and starts
 * nothing) and publishes rank statuses on EDGE_RANKS as a real edge would, signed with its key
 * (`edgeKeyOf(id)`). Its "processes" are entries in a map; the test decides when they exit and how
 * long they ran (`usageFactor` makes it claim a multiple of that: a lying edge).
 */
export class TestEdge {
  readonly ranks = new Map<string, TestRank>();
  /** Start commands that created a rank, per (job, attempt, rank) key. */
  readonly created = new Map<string, number>();
  readonly startRequests: StartCommand[] = [];
  readonly stopRequests: PayloadOf<typeof StopRanksOnEdge>[] = [];
  readonly released: string[] = [];
  /** `hold`: create the rank but send no reply and no status (a reply lost as the service died). */
  mode: 'normal' | 'silent' | 'hold' = 'normal';
  /** Wall seconds a rank reports when it is stopped. */
  stoppedWallSeconds = 5;
  /** What the edge claims: its wall seconds times this (1: honest). */
  usageFactor = 1;
  private sequence = 0;
  private readonly subscriptions: Subscription[] = [];

  constructor(
    readonly id: string,
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly prefix: string,
    private readonly now: () => Date,
  ) {
    this.subscriptions.push(
      nc.subscribe(StartRankOnEdge.subject({ edgeId: id }, prefix), {
        callback: (_e, msg) => void this.onStart(msg),
      }),
      nc.subscribe(StopRanksOnEdge.subject({ edgeId: id }, prefix), {
        callback: (_e, msg) => void this.onStop(msg),
      }),
      nc.subscribe(ReleaseOnEdge.subject({ edgeId: id }, prefix), {
        callback: (_e, msg) => {
          const { data } = msg.json<{ data: PayloadOf<typeof ReleaseOnEdge> }>();
          this.released.push(data.reservationId);
          msg.respond(JSON.stringify({ reservationId: data.reservationId, released: true }));
        },
      }),
    );
  }

  static key = (jobId: string, attempt: number, rank: number): string => `${jobId}/${attempt}/${rank}`;

  /** Start commands of `jobId` that created a process, summed (a rank started twice counts 2). */
  createdFor(jobId: string): number {
    return [...this.created.entries()]
      .filter(([k]) => k.startsWith(`${jobId}/`))
      .reduce((n, [, c]) => n + c, 0);
  }

  private async onStart(msg: Msg): Promise<void> {
    const { data } = msg.json<{ data: StartCommand }>();
    this.startRequests.push(data);
    if (this.mode === 'silent') return;
    const key = TestEdge.key(data.jobId, data.attempt, data.rank);
    let rank = this.ranks.get(key);
    const created = rank === undefined;
    if (!rank) {
      rank = { command: data, state: 'running', startedAt: this.now().toISOString() };
      this.ranks.set(key, rank);
      this.created.set(key, (this.created.get(key) ?? 0) + 1);
    }
    if (this.mode === 'hold') return;
    msg.respond(
      JSON.stringify({
        outcome: 'started',
        jobId: data.jobId,
        attempt: data.attempt,
        rank: data.rank,
        created,
        startedAt: rank.startedAt,
      }),
    );
    if (created) await this.publish(rank, { state: 'running', wallSeconds: 0 });
  }

  private async onStop(msg: Msg): Promise<void> {
    const { data } = msg.json<{ data: PayloadOf<typeof StopRanksOnEdge> }>();
    this.stopRequests.push(data);
    const stopping = [...this.ranks.values()].filter(
      (r) =>
        r.command.jobId === data.jobId &&
        r.state === 'running' &&
        (data.attempt === null || r.command.attempt <= data.attempt),
    );
    msg.respond(JSON.stringify({ jobId: data.jobId, stopping: stopping.length }));
    for (const r of stopping) {
      r.state = 'exited';
      await this.publish(r, {
        state: 'exited',
        exitCode: null,
        signal: 'SIGTERM',
        stopReason: data.reason,
        wallSeconds: this.stoppedWallSeconds,
      });
    }
  }

  /** Publishes a running status of every rank this edge holds for `jobId` (held starts included). */
  async reportRunning(jobId: string): Promise<void> {
    for (const r of this.ranks.values())
      if (r.command.jobId === jobId && r.state === 'running')
        await this.publish(r, { state: 'running', wallSeconds: 0 });
  }

  /** Seconds the rank has run on this edge's clock (what an honest edge reports). */
  ranSeconds(jobId: string, attempt: number, rank: number): number {
    const r = this.ranks.get(TestEdge.key(jobId, attempt, rank));
    if (!r) throw new Error(`edge ${this.id} runs no rank ${rank} of ${jobId} attempt ${attempt}`);
    return Math.max(0, (this.now().getTime() - Date.parse(r.startedAt)) / 1000);
  }

  /** The rank exits by itself with `exitCode` after `wallSeconds`. */
  async exit(
    jobId: string,
    attempt: number,
    rank: number,
    exitCode: number,
    wallSeconds: number,
  ): Promise<void> {
    const r = this.ranks.get(TestEdge.key(jobId, attempt, rank));
    if (!r) throw new Error(`edge ${this.id} runs no rank ${rank} of ${jobId} attempt ${attempt}`);
    r.state = 'exited';
    await this.publish(r, { state: 'exited', exitCode, wallSeconds });
  }

  /**
   * A status on `edgeId`'s subject, signed with this edge's key unless `signature` is given (a
   * forgery: a status signed by another key, or bytes that are no signature).
   */
  async publishAs(edgeId: string, unsigned: UnsignedStatus, signature?: string): Promise<void> {
    this.sequence += 1;
    const fields = {
      ...unsigned,
      publicKey: unsigned.edgeId,
      sequence: this.sequence,
      signedAt: this.now().toISOString(),
    };
    const signed =
      signature ??
      Buffer.from(
        edgeKeyOf(this.id).sign(new TextEncoder().encode(signingInput(RankStatusReported, fields))),
      ).toString('base64url');
    const data: Status = { ...fields, signature: signed };
    const envelope = buildEnvelope(RankStatusReported, data, { streamId: `edge-${edgeId}` });
    await this.js.publish(RankStatusReported.subject({ edgeId }, this.prefix), JSON.stringify(envelope), {
      msgID: envelope.eventId,
    });
  }

  private async publish(
    r: TestRank,
    s: Partial<UnsignedStatus> & Pick<UnsignedStatus, 'state'>,
  ): Promise<void> {
    const now = this.now().toISOString();
    const claimed = s.wallSeconds === undefined ? {} : { wallSeconds: s.wallSeconds * this.usageFactor };
    await this.publishAs(this.id, {
      edgeId: this.id,
      jobId: r.command.jobId,
      attempt: r.command.attempt,
      rank: r.command.rank,
      startedAt: r.startedAt,
      exitedAt: s.state === 'exited' ? now : null,
      exitCode: null,
      signal: null,
      stopReason: null,
      wallSeconds: 0,
      reportedAt: now,
      ...s,
      ...claimed,
    });
  }

  close(): void {
    for (const s of this.subscriptions) s.unsubscribe();
  }
}
