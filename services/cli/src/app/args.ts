import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './command';

type Options = NonNullable<ParseArgsConfig['options']>;

/** `node:util` parseArgs with its errors turned into usage errors the dispatcher prints with help. */
export const parseCommandArgs = <O extends Options>(args: readonly string[], options: O) => {
  try {
    return parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
};
