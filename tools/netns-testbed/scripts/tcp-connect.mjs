// Tries one TCP connection and prints "connected" or "error <code>"; exit status 0 or 1.
// Usage: tcp-connect.mjs <host> <port> <timeoutMs>
import { connect } from 'node:net';
import console from 'node:console';
import process from 'node:process';
import { clearTimeout, setTimeout } from 'node:timers';

const [host, port, timeoutMs] = process.argv.slice(2);
const socket = connect({ host, port: Number(port) });
const timer = setTimeout(() => {
  console.log('error ETIMEDOUT');
  socket.destroy();
  process.exitCode = 1;
}, Number(timeoutMs));
socket.on('connect', () => {
  clearTimeout(timer);
  console.log('connected');
  socket.end();
});
socket.on('error', (error) => {
  clearTimeout(timer);
  console.log(`error ${error.code ?? error.message}`);
  process.exitCode = 1;
});
