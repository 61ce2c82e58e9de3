import { FakeClock, seededRandom } from '@gpunet/testing';
import { expect } from 'vitest';
import { DEFAULT_SETTLEMENT_CONFIG, SettlementWorkflow } from '../../src/app/settlement.workflow';
import { JobNotKnownYetError } from '../../src/domain/job/job-settlement.decider';
import type { Input } from './scenario';
import { T0 } from './scenario';
import { MemoryStore } from './memory-store';

export interface Delivery {
  readonly store: MemoryStore;
  /** Deliveries that had to wait for another message first (redelivered later, like a nak). */
  readonly deferred: number;
}

/**
 * Delivers inputs at least once, the way JetStream would: in the given order, each possibly
 * several times; an input whose prerequisite has not arrived yet (usage before the job, say) is
 * put back at the end of the queue, as a nak would. `afterEach` checks invariants after every
 * delivery.
 */
export const deliver = async (
  inputs: readonly Input[],
  options: { store?: MemoryStore; afterEach?: (store: MemoryStore) => void; clock?: FakeClock } = {},
): Promise<Delivery> => {
  const store = options.store ?? new MemoryStore();
  const clock = options.clock ?? new FakeClock(T0);
  const workflow = new SettlementWorkflow(
    { ...DEFAULT_SETTLEMENT_CONFIG, minSubnetCreationStake: 1_000n },
    clock,
  );
  const queue = [...inputs];
  let deferred = 0;
  for (let guard = 0; queue.length > 0; guard++) {
    if (guard > inputs.length * 20) throw new Error('deliveries did not converge');
    const input = queue.shift()!;
    clock.advance(1_000);
    const meta = { correlationId: 'c', causationId: null };
    try {
      await store.transaction(async (uow) => {
        switch (input.kind) {
          case 'message':
            await workflow.handle(uow, input.envelope);
            return;
          case 'deposit':
            await workflow.recordDeposit(uow, input.deposit, meta);
            return;
          case 'release':
            await workflow.releaseUnbonded(uow, input.subnetId, meta);
            return;
          case 'withdrawal-result': {
            const { state } = await workflow.resolveWithdrawal(
              uow,
              input.withdrawalId,
              input.confirmed
                ? { confirmed: true, chainTxId: `tx-${input.withdrawalId}` }
                : { confirmed: false, reason: 'refused' },
              meta,
            );
            if (state.status === 'none') throw new NotYet();
            return;
          }
        }
      });
    } catch (error) {
      if (!(error instanceof JobNotKnownYetError) && !(error instanceof NotYet)) throw error;
      deferred += 1;
      queue.push(input);
      continue;
    }
    options.afterEach?.(store);
  }
  return { store, deferred };
};

class NotYet extends Error {}

/** The inputs shuffled (seeded) with some delivered twice or three times. */
export const shuffledWithDuplicates = (
  inputs: readonly Input[],
  seed: number,
  duplicateRate = 0.3,
): Input[] => {
  const rng = seededRandom(seed);
  const out: Input[] = [];
  for (const input of inputs) {
    out.push(input);
    while (rng.next() < duplicateRate) out.push(input);
  }
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
};

export { expect };
