// Sends every UDP datagram back to where it came from, unchanged: the far end of `udp-rtt`.
// Usage: udp-echo.mjs <port> [address]   Prints "ready" once bound.
import { createSocket } from 'node:dgram';
import console from 'node:console';
import process from 'node:process';

const [port, address] = process.argv.slice(2);
const socket = createSocket('udp4');
socket.on('message', (msg, from) => socket.send(msg, from.port, from.address));
socket.bind(Number(port), address, () => console.log('ready'));
