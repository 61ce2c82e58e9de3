import { explainEnsembleSpec } from '@gpunet/ensemble-spec';
import { parseCommandArgs } from '../../args';
import { type Command, ExitCode, UsageError } from '../../command';
import { formatReport, toReport } from './report';
import { checkSpecFile } from './spec-files';

export const explainCommand: Command = {
  name: 'explain',
  summary: 'say in words what a spec file asks for (not where a job runs: see `gpunet job explain`)',
  help: [
    'Usage: gpunet spec explain [--json] <file>',
    '',
    'Prints the normalized requirement of each allocation in words, e.g.',
    '  "16 GPUs, NVIDIA, ≥ 80 GB each, compute ≥ 9.0, CUDA ≥ 12.2, at most 2 nodes, ≥ 100 Gbps between nodes".',
    'Offline, from the file alone. Why a submitted job was placed where it is: `gpunet job explain <job-id>`.',
    '',
    'Options:',
    '  --json    print {file, explanation, spec} where spec is the normalized form services consume',
    '',
    'Exit status: 0 explained, 1 invalid or unreadable, 2 bad command line.',
    '',
  ].join('\n'),
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, { json: { type: 'boolean', default: false } });
    if (positionals.length !== 1) throw new UsageError('name exactly one spec file');
    const file = positionals[0]!;
    const outcome = await checkSpecFile(file, io);
    if ('readError' in outcome || !outcome.result.ok) {
      const report = toReport(outcome);
      io.out(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
      return ExitCode.Failed;
    }
    const explanation = explainEnsembleSpec(outcome.result.spec);
    if (values.json) {
      io.out(
        `${JSON.stringify({ file, explanation, spec: outcome.result.spec, warnings: outcome.result.warnings }, null, 2)}\n`,
      );
    } else {
      io.out(explanation);
    }
    return ExitCode.Ok;
  },
};
