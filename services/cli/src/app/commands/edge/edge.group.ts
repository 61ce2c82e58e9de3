import type { Command, CommandGroup } from '../../command';
import { type EdgeRunner, spawnEdge } from './edge-process';

const COMMON = [
  '  --dir DIR         the edge directory: identity (edge.nk, 0600), state.json, policy.yaml',
  '                    (default $GPUNET_EDGE_HOME or ~/.gpunet/edge)',
];

const passThrough = (
  name: 'init' | 'start' | 'status',
  summary: string,
  usage: string,
  options: string[],
  run: EdgeRunner,
): Command => ({
  name,
  summary,
  help: [
    `Usage: gpunet edge ${usage}`,
    '',
    summary[0]!.toUpperCase() + summary.slice(1) + '.',
    '',
    'Options:',
    ...COMMON,
    ...options,
    '',
    'Guide: docs/provider-guide.md',
    '',
  ].join('\n'),
  run: async (args) => (await run([name, ...args])) as 0 | 1 | 2,
});

/**
 * `gpunet edge …`: the provider's commands. They run the `provider-edge` program (services/provider-edge),
 * which validates every argument and file and returns 0 (ok), 1 (a problem, e.g. an invalid policy
 * with its field paths) or 2 (a wrong command line).
 */
export const edgeGroup = (run: EdgeRunner = spawnEdge()): CommandGroup => ({
  name: 'edge',
  summary: 'run a provider edge: keys, policy, detection, registration',
  commands: [
    passThrough('init', 'create the edge key pair and a policy template', 'init [--dir DIR]', [], run),
    passThrough(
      'start',
      'detect GPUs, validate the policy, register and serve reservations until stopped',
      'start [--dir DIR] [--policy FILE] [--nats URL] [--simulate INVENTORY] [--heartbeat 5s] [--rescan 60s]',
      [
        '  --policy FILE     the policy file (default DIR/policy.yaml)',
        '  --nats URL        NATS server (default $NATS_URL or nats://127.0.0.1:4222)',
        '  --simulate FILE   declared inventory: simulated GPUs, labelled simulated in every report',
        '  --heartbeat DUR   heartbeat period (default 5s)',
        '  --rescan DUR      hardware rescan period (default 60s)',
        '  --runtime RUNTIME how ranks run: docker (sandboxed containers, the default), process',
        '                    (host processes, no sandbox: needs --unsafe-allow-host-processes;',
        '                    development and CI only), or none',
        '',
        'SIGHUP reloads the policy; SIGTERM/SIGINT stop the edge.',
      ],
      run,
    ),
    passThrough(
      'status',
      "show the edge id, the policy's validity, detected GPUs and reservations",
      'status [--dir DIR] [--policy FILE] [--simulate INVENTORY] [--json]',
      [
        '  --policy FILE     the policy file (default DIR/policy.yaml)',
        '  --simulate FILE   declared inventory instead of detection',
        '  --json            one JSON document',
      ],
      run,
    ),
  ],
});

export const edgeCommands: CommandGroup = edgeGroup();
