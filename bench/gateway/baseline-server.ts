/**
 * The baseline of bench/gateway: a bare `node:http` server in its own process answering what the
 * gateway's two measured routes answer in shape (a small JSON job view for GET, 202 with a job id
 * for POST) with no auth, no database and no framework. Prints `{"url": ...}` once listening.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

const view = (jobId: string): string =>
  JSON.stringify({ jobId, status: 'running', tenantId: 'bench', subnetId: 'demo', gpus: 4, attempt: 1 });

const server = createServer((req, res) => {
  if (req.method === 'POST') {
    // Read the whole body, as the gateway does, before answering.
    req.on('data', () => undefined);
    req.on('end', () => {
      const jobId = randomUUID();
      res.writeHead(202, { 'content-type': 'application/json', location: `/v1/jobs/${jobId}` });
      res.end(view(jobId));
    });
    return;
  }
  const jobId = (req.url ?? '/').split('/').pop() ?? '';
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(view(jobId));
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  console.log(JSON.stringify({ url: `http://127.0.0.1:${address.port}` }));
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
