import { ensembleSpecJsonSchema } from '@gpunet/ensemble-spec';
import { parseCommandArgs } from '../../args';
import { type Command, ExitCode, UsageError } from '../../command';

export const schemaCommand: Command = {
  name: 'schema',
  summary: 'print the JSON Schema of the spec format (for editors)',
  help: [
    'Usage: gpunet spec schema',
    '',
    'Prints the JSON Schema (draft-07) generated from the validator; the same file is',
    'published as docs/ensemble-spec.schema.json.',
    '',
  ].join('\n'),
  run(args, io) {
    const { positionals } = parseCommandArgs(args, {});
    if (positionals.length > 0) throw new UsageError('takes no arguments');
    io.out(`${JSON.stringify(ensembleSpecJsonSchema(), null, 2)}\n`);
    return Promise.resolve(ExitCode.Ok);
  },
};
