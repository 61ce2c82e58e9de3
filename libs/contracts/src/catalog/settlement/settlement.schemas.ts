import { z } from 'zod';

/** A share in basis points: 0 … 10 000 (100 %). */
export const BasisPointsSchema = z.int().min(0).max(10_000);
