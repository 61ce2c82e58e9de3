import { z } from 'zod';
import { AssetSchema, EntityIdSchema, MinorUnitsSchema } from '../primitives';

/** Which of an owner's accounts a withdrawal draws from. */
export const WithdrawalSourceSchema = z.enum(['wallet', 'payable']);

/** What every event about a withdrawal repeats: which one, whose, from which account, how much. */
export const withdrawalFields = {
  withdrawalId: EntityIdSchema,
  ownerId: EntityIdSchema,
  source: WithdrawalSourceSchema,
  asset: AssetSchema,
  amount: MinorUnitsSchema,
};
