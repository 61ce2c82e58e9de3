import { z } from 'zod';
import { defineQuery } from '../../query';
import { AssetSchema, EntityIdSchema, MinorUnitsSchema } from '../primitives';

/**
 * Development only: "someone sends `amount` to `ownerId`'s deposit address" on the **simulated**
 * chain, mined until confirmed and credited by a chain pass before the reply. Served only by a
 * settlement whose chain adapter is `simulated` (the demo, end-to-end tests, `gpunet account
 * deposit` against a development cluster); a real chain is deposited to with a wallet.
 */
export const SimulatedChainDepositRequest = defineQuery({
  name: 'settlement.simulated-chain.deposit',
  version: 1,
  description: 'Deposit on the simulated chain (development only), confirmed and credited before the reply.',
  request: z.strictObject({ ownerId: EntityIdSchema, asset: AssetSchema, amount: MinorUnitsSchema }),
  response: z.strictObject({
    chainTxId: z.string(),
    /** The owner's wallet balance after the credit (available, minor units). */
    available: MinorUnitsSchema,
  }),
});
