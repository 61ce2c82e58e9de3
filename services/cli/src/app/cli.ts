import { ExitCode, type CommandGroup, UsageError } from './command';
import { edgeCommands } from './commands/edge/edge.group';
import { specCommands } from './commands/spec/spec.group';
import type { CliIo } from './io';

/** Every command group of the `gpunet` CLI. New groups are added here and nowhere else. */
export const commandGroups: readonly CommandGroup[] = [specCommands, edgeCommands];

const rootHelp = (groups: readonly CommandGroup[]): string =>
  [
    'gpunet — the command line of the gpunet decentralized GPU cluster',
    '',
    'Usage: gpunet <group> <command> [options] [arguments]',
    '',
    'Command groups:',
    ...groups.map((g) => `  ${g.name.padEnd(10)} ${g.summary}`),
    '',
    'Run `gpunet <group> --help` for the commands of a group.',
    '',
  ].join('\n');

const groupHelp = (g: CommandGroup): string =>
  [
    `gpunet ${g.name} — ${g.summary}`,
    '',
    `Usage: gpunet ${g.name} <command> [options]`,
    '',
    'Commands:',
    ...g.commands.map((c) => `  ${c.name.padEnd(10)} ${c.summary}`),
    '',
    `Run \`gpunet ${g.name} <command> --help\` for details.`,
    '',
  ].join('\n');

const isHelp = (a: string | undefined): boolean => a === '--help' || a === '-h' || a === 'help';

/** Runs one command line (without `node` and the script) and returns the process exit code. */
export const runCli = async (
  argv: readonly string[],
  io: CliIo,
  groups: readonly CommandGroup[] = commandGroups,
): Promise<ExitCode> => {
  const [groupName, commandName, ...rest] = argv;
  if (groupName === undefined || isHelp(groupName)) {
    (groupName === undefined ? io.err : io.out)(rootHelp(groups));
    return groupName === undefined ? ExitCode.Usage : ExitCode.Ok;
  }
  const group = groups.find((g) => g.name === groupName);
  if (!group) {
    io.err(`gpunet: unknown command group '${groupName}'\n\n${rootHelp(groups)}`);
    return ExitCode.Usage;
  }
  if (commandName === undefined || isHelp(commandName)) {
    (commandName === undefined ? io.err : io.out)(groupHelp(group));
    return commandName === undefined ? ExitCode.Usage : ExitCode.Ok;
  }
  const command = group.commands.find((c) => c.name === commandName);
  if (!command) {
    io.err(`gpunet ${group.name}: unknown command '${commandName}'\n\n${groupHelp(group)}`);
    return ExitCode.Usage;
  }
  if (rest.some((a) => a === '--help' || a === '-h')) {
    io.out(command.help);
    return ExitCode.Ok;
  }
  try {
    return await command.run(rest, io);
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`gpunet ${group.name} ${command.name}: ${e.message}\n\n${command.help}`);
      return ExitCode.Usage;
    }
    throw e;
  }
};
