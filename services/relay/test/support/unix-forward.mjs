// Forwards each connection to a Unix socket (files are shared across network namespaces) to a TCP
// address inside this process's namespace: how a test process in the machine's own namespace reaches
// a server that only exists inside a testbed namespace. Usage: unix-forward.mjs <socket> <host> <port>
import console from 'node:console';
import { rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import process from 'node:process';

const [socketPath, host, port] = process.argv.slice(2);
rmSync(socketPath, { force: true });
const server = createServer((client) => {
  const upstream = connect(Number(port), host);
  client.pipe(upstream).pipe(client);
  const close = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', close).on('close', close);
  upstream.on('error', close).on('close', close);
});
server.listen(socketPath, () => console.log(`ready ${socketPath}`));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
