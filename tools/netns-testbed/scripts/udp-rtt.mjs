// Measures round trips to a `udp-echo`: sends <count> numbered datagrams <intervalMs> apart, waits
// <waitMs> after the last for late answers, and prints one JSON line: sent, received, and the round
// trips in ms (sorted, one per answered datagram; duplicates ignored).
// Usage: udp-rtt.mjs <host:port> <count> <intervalMs> <waitMs> [payloadBytes]
import { createSocket } from 'node:dgram';
import console from 'node:console';
import { performance } from 'node:perf_hooks';
import { Buffer } from 'node:buffer';
import process from 'node:process';
import { setInterval, clearInterval, setTimeout } from 'node:timers';

const [target, count, intervalMs, waitMs, payloadBytes] = process.argv.slice(2);
const [host, port] = target.split(':');
const total = Number(count);
const sentAt = new Map();
const rtts = [];
const socket = createSocket('udp4');
socket.on('message', (msg) => {
  const seq = msg.readUInt32BE(0);
  const at = sentAt.get(seq);
  if (at === undefined) return;
  sentAt.delete(seq);
  rtts.push(performance.now() - at);
});
const payload = Buffer.alloc(Math.max(4, Number(payloadBytes ?? 32)));
let seq = 0;
const send = () => {
  const datagram = Buffer.from(payload);
  datagram.writeUInt32BE(seq, 0);
  sentAt.set(seq, performance.now());
  socket.send(datagram, Number(port), host);
  if (++seq === total) {
    clearInterval(timer);
    setTimeout(() => {
      rtts.sort((a, b) => a - b);
      console.log(JSON.stringify({ sent: total, received: rtts.length, rttMs: rtts }));
      socket.close();
    }, Number(waitMs));
  }
};
const timer = setInterval(send, Number(intervalMs));
