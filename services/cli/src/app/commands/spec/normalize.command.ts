import { serializeEnsembleSpec } from '@gpunet/ensemble-spec';
import { parseCommandArgs } from '../../args';
import { type Command, ExitCode, UsageError } from '../../command';
import { formatReport, toReport } from './report';
import { checkSpecFile } from './spec-files';

export const normalizeCommand: Command = {
  name: 'normalize',
  summary: 'print the canonical form of a spec',
  help: [
    'Usage: gpunet spec normalize [--json] <file>',
    '',
    'Prints the canonical source of the spec (every default written out, units in their largest',
    'exact form). Two specs mean the same job exactly when their canonical forms are equal.',
    '',
    'Options:',
    '  --json    print the normalized form itself (integers: bytes, bits/s, ms, µs, minor units)',
    '',
  ].join('\n'),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, { json: { type: 'boolean', default: false } });
    if (positionals.length !== 1) throw new UsageError('name exactly one spec file');
    const outcome = await checkSpecFile(positionals[0]!, io);
    if ('readError' in outcome || !outcome.result.ok) {
      io.out(formatReport(toReport(outcome)));
      return ExitCode.Failed;
    }
    io.out(
      values.json
        ? `${JSON.stringify(outcome.result.spec, null, 2)}\n`
        : serializeEnsembleSpec(outcome.result.spec),
    );
    return ExitCode.Ok;
  },
};
