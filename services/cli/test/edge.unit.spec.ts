import { describe, expect, it } from 'vitest';
import { runCli } from '../src/app/cli';
import { edgeGroup } from '../src/app/commands/edge/edge.group';
import { fakeIo } from './fake-io';

describe('gpunet edge', () => {
  const recorder = (code: number) => {
    const calls: string[][] = [];
    return { calls, group: edgeGroup(async (args) => (calls.push([...args]), code)) };
  };

  it('runs provider-edge with the command and its arguments, and returns its exit status', async () => {
    const { calls, group } = recorder(0);
    const { io } = fakeIo();
    expect(
      await runCli(['edge', 'start', '--simulate', 'inv.yaml', '--nats', 'nats://x:4222'], io, [group]),
    ).toBe(0);
    expect(await runCli(['edge', 'init', '--dir', '/tmp/e'], io, [group])).toBe(0);
    expect(calls).toEqual([
      ['start', '--simulate', 'inv.yaml', '--nats', 'nats://x:4222'],
      ['init', '--dir', '/tmp/e'],
    ]);
    const failing = recorder(1);
    expect(await runCli(['edge', 'status'], io, [failing.group])).toBe(1);
  });

  it('has help for the group and each command', async () => {
    const { group } = recorder(0);
    const group$ = fakeIo();
    expect(await runCli(['edge', '--help'], group$.io, [group])).toBe(0);
    expect(group$.stdout()).toMatch(/init .*\n.*start .*\n.*status /);
    const start = fakeIo();
    expect(await runCli(['edge', 'start', '--help'], start.io, [group])).toBe(0);
    expect(start.stdout()).toContain('--simulate FILE');
    expect(start.stdout()).toContain('docs/provider-guide.md');
  });

  it('is a registered group of the CLI', async () => {
    const { io, stdout } = fakeIo();
    await runCli(['--help'], io);
    expect(stdout()).toMatch(/^\s+edge\s+run a provider edge/m);
  });
});
