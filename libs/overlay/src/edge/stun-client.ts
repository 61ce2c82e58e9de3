import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:dgram';
import { decodeStun, encodeBindingRequest, isStun } from '../protocol/stun';

/**
 * STUN Binding requests from a socket the caller owns (the port WireGuard will use), so the mapping
 * learnt is that port's. The caller routes the socket's STUN datagrams to `handle`.
 */
export class StunClient {
  readonly #pending = new Map<string, (mapped: string) => void>();

  /** Feeds a datagram; true when it was a STUN answer to one of our requests. */
  handle(datagram: Buffer): boolean {
    if (!isStun(datagram)) return false;
    const message = decodeStun(datagram);
    if (message?.kind !== 'success' || !message.mapped) return false;
    const resolve = this.#pending.get(message.transactionId.toString('hex'));
    if (!resolve) return false;
    this.#pending.delete(message.transactionId.toString('hex'));
    resolve(`${message.mapped.address}:${message.mapped.port}`);
    return true;
  }

  /**
   * The public `address:port` of `socket` as the server at `host:port` sees it; null when no answer
   * came within `timeoutMs` (requests are resent every `timeoutMs / 4`, as UDP may lose them).
   */
  async query(socket: Socket, host: string, port: number, timeoutMs = 1_000): Promise<string | null> {
    const transactionId = randomBytes(12);
    const hex = transactionId.toString('hex');
    const request = encodeBindingRequest(transactionId);
    return new Promise((resolve) => {
      const send = () => {
        try {
          socket.send(request, port, host);
        } catch {
          // socket closed: the timeout answers
        }
      };
      const resend = setInterval(send, Math.max(10, Math.floor(timeoutMs / 4)));
      const timer = setTimeout(() => {
        clearInterval(resend);
        this.#pending.delete(hex);
        resolve(null);
      }, timeoutMs);
      this.#pending.set(hex, (mapped) => {
        clearInterval(resend);
        clearTimeout(timer);
        resolve(mapped);
      });
      send();
    });
  }
}
