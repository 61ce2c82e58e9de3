// Answers every UDP datagram with the address and port it came from, as this host sees them.
// Usage: udp-reflector.mjs <port>...   Prints "ready" once every port is bound.
import { createSocket } from 'node:dgram';
import console from 'node:console';
import process from 'node:process';

const ports = process.argv.slice(2).map(Number);
let bound = 0;
for (const port of ports) {
  const socket = createSocket('udp4');
  socket.on('message', (_msg, from) => socket.send(`${from.address}:${from.port}`, from.port, from.address));
  socket.bind(port, () => {
    if (++bound === ports.length) console.log('ready');
  });
}
