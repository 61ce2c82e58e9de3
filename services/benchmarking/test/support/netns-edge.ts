// One provider host of the namespace testbed (network.e2e.spec.ts), run inside its namespace:
// - the production probe responder (libs/edge-bench) — TCP throughput sink on PROBE_TCP_PORT,
//   UDP echo on an internal port;
// - in front of the echo, on PROBE_UDP_PORT, a user-space delay shim: it holds each datagram from
//   source address S for DELAYS[S] ms before passing it on. The kernel here has no `netem`, so this
//   is how the test gives pairs of hosts wide-area RTTs; only RTT probes cross it (throughput runs
//   on the real, tbf-limited link);
// - the prober: each stdin line `{"id","request"}` (a ProbeLinksOnEdge payload) is run with the
//   production `probeTargets` and answered on stdout as `{"id","results"}`.
// Usage: netns-edge.ts <address> <delays JSON: {"10.77.0.11": 24, …}>
import { probeTargets, type ProbeRequest, startProbeResponder } from '@gpunet/edge-bench';
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { createInterface } from 'node:readline';
import { PROBE_TCP_PORT, PROBE_UDP_PORT } from './probe-ports';
const ECHO_PORT = 17946;

// tsx runs this file as CommonJS (no top-level await).
const main = async (): Promise<void> => {
  const [address, delaysJson] = process.argv.slice(2);
  if (!address || !delaysJson) throw new Error('usage: netns-edge.ts <address> <delays JSON>');
  const delays = JSON.parse(delaysJson) as Record<string, number>;

  await startProbeResponder({ address: '0.0.0.0', udpPort: ECHO_PORT, tcpPort: PROBE_TCP_PORT });

  const shim = createSocket('udp4');
  const upstreams = new Map<string, Socket>();
  const upstreamFor = (from: RemoteInfo): Socket => {
    const key = `${from.address}:${from.port}`;
    let up = upstreams.get(key);
    if (!up) {
      up = createSocket('udp4');
      up.on('message', (reply) => shim.send(reply, from.port, from.address));
      up.bind(0, '127.0.0.1');
      upstreams.set(key, up);
    }
    return up;
  };
  shim.on('message', (msg, from) => {
    const up = upstreamFor(from);
    const delay = delays[from.address] ?? 0;
    // No timer for LAN peers: even setTimeout(0) costs a millisecond, a WAN-sized RTT on a LAN.
    if (delay === 0) up.send(msg, ECHO_PORT, '127.0.0.1');
    else setTimeout(() => up.send(msg, ECHO_PORT, '127.0.0.1'), delay);
  });
  await new Promise<void>((resolve) => shim.bind(PROBE_UDP_PORT, address, resolve));

  createInterface({ input: process.stdin }).on('line', (line) => {
    const { id, request } = JSON.parse(line) as { id: string; request: ProbeRequest };
    void probeTargets(request).then((results) =>
      process.stdout.write(`${JSON.stringify({ id, results })}\n`),
    );
  });
  process.stdout.write('ready\n');
};

void main();
