import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const FIXTURES = join(import.meta.dirname, '..', 'fixtures');

/** A fixture file's text: `fixture('nvidia', 'h100-sxm-8x.query.csv')`. */
export const fixture = (...path: string[]): string => readFileSync(join(FIXTURES, ...path), 'utf8');
