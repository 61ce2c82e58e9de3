import { type OverlayAttachReply, type OverlayConnectReply } from '@gpunet/contracts';
import { z } from 'zod';

/*
 * The reply to `cmd.edge.{edgeId}.detach-overlay.v1`. libs/contracts defines the command but not its
 * answer (attach and connect have `OverlayAttachReplySchema` / `OverlayConnectReplySchema`); it is
 * defined here, in the same shape, until it moves next to the command.
 */
export const OverlayDetachReplySchema = z.discriminatedUnion('outcome', [
  z.strictObject({ outcome: z.literal('detached') }),
  z.strictObject({ outcome: z.literal('failed'), reason: z.string().max(1024) }),
]);
export type OverlayDetachReply = z.infer<typeof OverlayDetachReplySchema>;

/** The three overlay commands an edge answers. */
export type OverlayCommandKind = 'attach' | 'connect' | 'detach';

export interface OverlayReplyOf {
  attach: OverlayAttachReply;
  connect: OverlayConnectReply;
  detach: OverlayDetachReply;
}

/** Replies carry at most 1 024 characters of reason (the contracts' limit). */
export const MAX_REASON_LENGTH = 1024;

export const failed = (reason: string): { outcome: 'failed'; reason: string } => ({
  outcome: 'failed',
  reason: reason.length > MAX_REASON_LENGTH ? `${reason.slice(0, MAX_REASON_LENGTH - 1)}…` : reason,
});

/** `Name: message` of anything thrown. */
export const describeError = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error);

/**
 * No reply came (no responder, deadline passed, or a reply off contract): the edge may still act on
 * the command later, unlike one that answered `failed`.
 */
export interface Unanswered {
  readonly outcome: 'unanswered';
  readonly reason: string;
}

export const unanswered = (reason: string): Unanswered => ({
  outcome: 'unanswered',
  reason: reason.length > MAX_REASON_LENGTH ? `${reason.slice(0, MAX_REASON_LENGTH - 1)}…` : reason,
});
