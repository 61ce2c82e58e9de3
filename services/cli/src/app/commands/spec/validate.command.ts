import { parseCommandArgs } from '../../args';
import { type Command, ExitCode, UsageError } from '../../command';
import { formatReport, toReport } from './report';
import { checkSpecFile, expandSpecPaths } from './spec-files';

export const validateCommand: Command = {
  name: 'validate',
  summary: 'check ensemble specs; exit 0 when all are valid',
  help: [
    'Usage: gpunet spec validate [--json] [--quiet] <file|directory>…',
    '',
    'Parses and validates each spec and prints every problem with its file:line:column, field path',
    'and what to do. Directories are searched for .yaml, .yml and .json files.',
    '',
    'Options:',
    '  --json    print one JSON document: {ok, files: [{file, ok, errors, warnings}]}',
    '  --quiet   print only invalid files and their errors',
    '',
    'Exit status: 0 all valid, 1 some invalid or unreadable, 2 bad command line.',
    '',
  ].join('\n'),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      json: { type: 'boolean', default: false },
      quiet: { type: 'boolean', short: 'q', default: false },
    });
    if (positionals.length === 0) throw new UsageError('name at least one spec file');
    const files = await expandSpecPaths(positionals, io);
    const reports = [];
    for (const file of files) reports.push(toReport(await checkSpecFile(file, io)));
    const ok = reports.every((r) => r.ok);
    if (values.json) {
      io.out(`${JSON.stringify({ ok, files: reports }, null, 2)}\n`);
    } else {
      for (const r of reports) io.out(formatReport(r, values.quiet));
      const invalid = reports.filter((r) => !r.ok).length;
      if (!values.quiet || invalid > 0) {
        io.out(
          `${reports.length} spec${reports.length === 1 ? '' : 's'}: ${reports.length - invalid} valid, ${invalid} invalid\n`,
        );
      }
    }
    return ok ? ExitCode.Ok : ExitCode.Failed;
  },
};
