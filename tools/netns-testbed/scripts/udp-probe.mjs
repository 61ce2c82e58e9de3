// Sends one datagram from a fixed local port to each target and prints, as JSON, what each target
// saw as its source ("address:port"), or null after the timeout.
// Usage: udp-probe.mjs <localPort> <timeoutMs> <host:port>...
import { createSocket } from 'node:dgram';
import console from 'node:console';
import process from 'node:process';
import { clearTimeout, setTimeout } from 'node:timers';

const [localPort, timeoutMs, ...targets] = process.argv.slice(2);
const seen = Object.fromEntries(targets.map((t) => [t, null]));
const socket = createSocket('udp4');
const finish = () => {
  console.log(JSON.stringify(seen));
  socket.close();
};
socket.on('message', (msg, from) => {
  seen[`${from.address}:${from.port}`] = msg.toString();
  if (Object.values(seen).every((v) => v !== null)) {
    clearTimeout(timer);
    finish();
  }
});
const timer = setTimeout(finish, Number(timeoutMs));
socket.bind(Number(localPort), () => {
  for (const target of targets) {
    const [host, port] = target.split(':');
    socket.send('probe', Number(port), host);
  }
});
