#!/usr/bin/env node
/* global process */
// Runs inside a network namespace: accepts TCP on <host>:<port> there and carries every connection
// to the unix socket <path>, which a process in the machine's own namespace serves (filesystem
// sockets cross network namespaces). This is how a namespaced edge reaches the host's NATS without
// any route between the namespace and the host. Prints "forwarding" once it listens.
import { createConnection, createServer } from 'node:net';

const [host, port, path] = process.argv.slice(2);
if (!host || !port || !path) {
  process.stderr.write('usage: forward-to-unix.mjs <host> <port> <unix socket path>\n');
  process.exit(2);
}
const server = createServer((inbound) => {
  const outbound = createConnection({ path });
  inbound.pipe(outbound).pipe(inbound);
  const close = () => {
    inbound.destroy();
    outbound.destroy();
  };
  inbound.on('error', close);
  outbound.on('error', close);
});
server.listen(Number(port), host, () => process.stdout.write(`forwarding ${host}:${port} -> ${path}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
