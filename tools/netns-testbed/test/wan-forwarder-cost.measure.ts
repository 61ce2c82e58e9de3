/*
 * Measures what the WAN forwarder costs: the packet rate it sustains (small UDP datagrams, offered
 * far above it) and its CPU and memory while carrying 10 Mbit/s. Root; prints Markdown rows for
 * `wan-forwarder-cost.md`. Run: node --import tsx tools/netns-testbed/test/wan-forwarder-cost.measure.ts
 */
import { readFile } from 'node:fs/promises';
import { buildInternet, requireTestbed, Testbed } from '../src';

const SECONDS = 5;
const ticks = async (pid: number) => {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]); // utime + stime, in clock ticks (100 Hz)
};
const rssKiB = async (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))![1]);

const main = async (): Promise<void> => {
  if (!(await requireTestbed('wan forwarder cost', ['iperf3']))) return;
  const tb = await Testbed.create('wan-cost');
  try {
    const net = await buildInternet(tb, {
      sites: [],
      public: ['p1', 'p2'],
      wan: { pairs: [{ a: 'p1', b: 'p2', delayMs: 10 }] },
    });
    const pid = net.wan!.forwarder.pid!;
    const rows: string[] = [];
    for (const [name, args] of [
      ['saturation: 64-byte UDP datagrams offered at 200 Mbit/s', ['-b', '200M', '-l', '64']],
      ['10 Mbit/s of 1400-byte UDP datagrams', ['-b', '10M', '-l', '1400']],
    ] as const) {
      const server = net.host('p2').ns.spawn('iperf3', ['iperf3', '-s', '-1', '--forceflush', '-p', '5201']);
      await server.waitForOutput(/Server listening/);
      const before = await net.wan!.direction('p1', 'p2');
      const cpu0 = await ticks(pid);
      const t0 = performance.now();
      const { stdout } = await net
        .host('p1')
        .ns.exec(['iperf3', '-c', net.host('p2').address, '-u', ...args, '-t', String(SECONDS), '-J'], {
          timeoutMs: (SECONDS + 20) * 1000,
        });
      const seconds = (performance.now() - t0) / 1000;
      const cpu = ((await ticks(pid)) - cpu0) / 100 / seconds;
      const after = await net.wan!.direction('p1', 'p2');
      const pps = (after.forwarded - before.forwarded) / seconds;
      const mbps = ((after.bytes - before.bytes) * 8) / seconds / 1e6;
      const offered = (JSON.parse(stdout) as { end: { sum: { packets: number } } }).end.sum.packets / seconds;
      const cells = [
        name,
        Math.round(offered),
        Math.round(pps),
        mbps.toFixed(1),
        `${(cpu * 100).toFixed(0)} %`,
        ((cpu / pps) * 1e6).toFixed(1),
        `${Math.round((await rssKiB(pid)) / 1024)} MiB`,
      ];
      rows.push(`| ${cells.join(' | ')} |`);
      await server.waitForExit(10_000);
    }
    console.log(
      '| load | packets/s offered | packets/s forwarded | Mbit/s (IP) | forwarder CPU (one core = 100 %) | CPU µs per packet | RSS |',
    );
    console.log('| --- | --- | --- | --- | --- | --- | --- |');
    for (const row of rows) console.log(row);
  } finally {
    await tb.destroy();
  }
};

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
