// Accepts TCP connections on a port (and address, default every address) and closes them; prints
// "ready" once listening. Usage: tcp-listen.mjs <port> [address]
import { createServer } from 'node:net';
import console from 'node:console';
import process from 'node:process';

const [port, host] = process.argv.slice(2);
createServer((socket) => socket.end()).listen({ port: Number(port), host }, () => console.log('ready'));
