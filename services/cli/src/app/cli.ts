import { isCliError } from './api/errors';
import { ExitCode, type Command, type CommandGroup, UsageError } from './command';
import { loginCommand, logoutCommand } from './commands/auth/auth.commands';
import { edgeCommands } from './commands/edge/edge.group';
import { jobCommands } from './commands/job/job.group';
import { accountCommands } from './commands/market/account.group';
import { providersCommands } from './commands/market/providers.group';
import { subnetCommands } from './commands/market/subnet.group';
import { specCommands } from './commands/spec/spec.group';
import type { CliIo } from './io';

/** Every command group of the `gpunet` CLI. New groups are added here and nowhere else. */
export const commandGroups: readonly CommandGroup[] = [
  specCommands,
  jobCommands,
  providersCommands,
  subnetCommands,
  accountCommands,
  edgeCommands,
];

/** Commands without a group: `gpunet login`. */
export const topCommands: readonly Command[] = [loginCommand, logoutCommand];

const EXIT_CODES = [
  'Exit status: 0 ok; 1 the command ran and found a problem (an invalid spec, a request the gateway',
  'refused, a job that did not complete); 2 bad command line; 3 not logged in, bad or revoked API key,',
  'missing scope; 4 not found; 5 the gateway is unreachable.',
];

const rootHelp = (groups: readonly CommandGroup[], top: readonly Command[]): string =>
  [
    'gpunet — the command line of the gpunet decentralized GPU cluster',
    '',
    'Usage: gpunet <group> <command> [options] [arguments]',
    '       gpunet login --gateway URL --key KEY',
    '',
    'Command groups:',
    ...groups.map((g) => `  ${g.name.padEnd(10)} ${g.summary}`),
    '',
    'Commands:',
    ...top.map((c) => `  ${c.name.padEnd(10)} ${c.summary}`),
    '',
    'Every command takes --help; commands that print data take --json.',
    'Environment: GPUNET_GATEWAY and GPUNET_API_KEY override the saved login; GPUNET_CONFIG moves it.',
    ...EXIT_CODES,
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

const runCommand = async (
  label: string,
  command: Command,
  rest: readonly string[],
  io: CliIo,
): Promise<ExitCode> => {
  if (rest.some((a) => a === '--help' || a === '-h')) {
    io.out(command.help);
    return ExitCode.Ok;
  }
  try {
    return await command.run(rest, io);
  } catch (e) {
    if (e instanceof UsageError || (isCliError(e) && e.exitCode === ExitCode.Usage)) {
      io.err(`${label}: ${e.message}\n\n${command.help}`);
      return ExitCode.Usage;
    }
    if (isCliError(e)) {
      const text = e.message.endsWith('\n') ? e.message : `${label}: ${e.message}\n`;
      if (rest.includes('--json'))
        io.out(
          `${JSON.stringify({ ok: false, exitCode: e.exitCode, error: text.trim(), ...(e.problem ? { problem: e.problem } : {}) })}\n`,
        );
      else io.err(text);
      return e.exitCode;
    }
    throw e;
  }
};

/** Runs one command line (without `node` and the script) and returns the process exit code. */
export const runCli = async (
  argv: readonly string[],
  io: CliIo,
  groups: readonly CommandGroup[] = commandGroups,
  top: readonly Command[] = topCommands,
): Promise<ExitCode> => {
  const [groupName, commandName, ...rest] = argv;
  if (groupName === undefined || isHelp(groupName)) {
    (groupName === undefined ? io.err : io.out)(rootHelp(groups, top));
    return groupName === undefined ? ExitCode.Usage : ExitCode.Ok;
  }
  const topCommand = top.find((c) => c.name === groupName);
  if (topCommand) return runCommand(`gpunet ${topCommand.name}`, topCommand, argv.slice(1), io);
  const group = groups.find((g) => g.name === groupName);
  if (!group) {
    io.err(`gpunet: unknown command group '${groupName}'\n\n${rootHelp(groups, top)}`);
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
  return runCommand(`gpunet ${group.name} ${command.name}`, command, rest, io);
};
