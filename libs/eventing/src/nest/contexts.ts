import { type Causation, causedBy, type Envelope } from '@gpunet/contracts';
import type { Msg } from '@nats-io/nats-core';
import { BaseRpcContext } from '@nestjs/microservices';
import type { HandlerContext } from '../jetstream/consumer';
import type { Tx } from '../postgres/database';

/**
 * What an `@EventPattern` handler gets as `@Ctx()`: the whole envelope, the consumer batch's
 * transaction (write the handler's effects with it: they commit with the inbox row and the
 * checkpoint, or not at all) and the delivery.
 */
export class EventContext extends BaseRpcContext<[Envelope, HandlerContext]> {
  get envelope(): Envelope {
    return this.args[0];
  }

  get tx(): Tx {
    return this.args[1].tx;
  }

  get subject(): string {
    return this.args[1].subject;
  }

  get streamSequence(): number {
    return this.args[1].streamSequence;
  }

  /** 1 on first delivery. */
  get deliveryCount(): number {
    return this.args[1].deliveryCount;
  }

  /** The causation of what this message causes: its correlation, caused by it. */
  causedBy(): Causation {
    return causedBy(this.envelope);
  }
}

/** A batch consumer's `@Ctx()`: the batch's envelopes (its payload is them too) and transaction. */
export class EventBatchContext extends BaseRpcContext<[readonly Envelope[], { readonly tx: Tx }]> {
  get envelopes(): readonly Envelope[] {
    return this.args[0];
  }

  get tx(): Tx {
    return this.args[1].tx;
  }
}

/** What an ephemeral (core-NATS) event handler gets as `@Ctx()`: the envelope and its subject. */
export class MessageContext extends BaseRpcContext<[Envelope, string]> {
  get envelope(): Envelope {
    return this.args[0];
  }

  get subject(): string {
    return this.args[1];
  }

  causedBy(): Causation {
    return causedBy(this.envelope);
  }
}

/** What a `@MessagePattern` (query) handler gets as `@Ctx()`: the request as it arrived. */
export class QueryContext extends BaseRpcContext<[Msg]> {
  get subject(): string {
    return this.args[0].subject;
  }

  get headers(): Msg['headers'] {
    return this.args[0].headers;
  }
}
