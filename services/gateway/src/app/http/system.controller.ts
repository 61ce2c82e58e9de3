import { EVENTING, type EventingRuntime } from '@gpunet/eventing';
import type { Registry } from '@gpunet/telemetry';
import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { METRICS_REGISTRY } from '../gateway.tokens';
import { buildOpenApiDocument } from './openapi';

const DOCS_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>gpunet gateway API</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}
code{background:#f3f3f3;padding:0 .2rem}h2{margin-top:2rem}.op{margin:.4rem 0}.m{display:inline-block;width:4.5rem;font-weight:bold}</style>
</head><body><h1>gpunet gateway API</h1>
<p>The OpenAPI 3.1 document: <a href="/docs/openapi.json">/docs/openapi.json</a>.
Authenticate with <code>Authorization: Bearer &lt;api key&gt;</code>; errors are RFC 9457 problem details.</p>
<div id="ops">Loading…</div>
<script>
fetch('/docs/openapi.json').then(r => r.json()).then(doc => {
  const el = document.getElementById('ops'); el.textContent = '';
  for (const [path, ops] of Object.entries(doc.paths)) for (const [method, op] of Object.entries(ops)) {
    const div = document.createElement('div'); div.className = 'op';
    const m = document.createElement('span'); m.className = 'm'; m.textContent = method.toUpperCase();
    const p = document.createElement('code'); p.textContent = path;
    const s = document.createElement('span'); s.textContent = ' — ' + (op.summary || '') + (op['x-scope'] ? ' [' + op['x-scope'] + ']' : '');
    div.append(m, p, s); el.append(div);
  }
});
</script></body></html>`;

@Controller()
export class SystemController {
  private readonly document = buildOpenApiDocument();

  constructor(
    @Inject(EVENTING) private readonly eventing: EventingRuntime,
    @Inject(METRICS_REGISTRY) private readonly metrics: Registry,
  ) {}

  @Get('healthz')
  health(): unknown {
    return { status: 'ok' };
  }

  @Get('readyz')
  async ready(@Res({ passthrough: true }) reply: FastifyReply): Promise<unknown> {
    const { database, nats } = await this.eventing.health();
    const ok = database && nats;
    reply.status(ok ? 200 : 503);
    return { status: ok ? 'ok' : 'unavailable', database, nats };
  }

  @Get('metrics')
  async prometheus(@Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    reply.header('content-type', this.metrics.contentType);
    return this.metrics.metrics();
  }

  @Get('docs')
  docs(@Res({ passthrough: true }) reply: FastifyReply): string {
    reply.header('content-type', 'text/html; charset=utf-8');
    return DOCS_HTML;
  }

  @Get('docs/openapi.json')
  openapi(): unknown {
    return this.document;
  }
}
