/**
 * Renders deploy/nats/auth.conf from the services' and edges' public keys:
 *
 *   npx tsx services/discovery/src/infra/nats-auth/render-nats-auth.main.ts services.json edges.txt > auth.conf
 *
 * `services.json` maps service names to public nkeys; `edges.txt` lists admitted edge ids, one per
 * line (`#` comments allowed). Then `nats-server --signal reload` applies it without a restart.
 */
import { readFileSync } from 'node:fs';
import { NatsAuthConfigError, renderNatsAuth } from './nats-auth.config';

const [servicesFile, edgesFile] = process.argv.slice(2);
if (!servicesFile || !edgesFile) {
  process.stderr.write('usage: render-nats-auth.main.ts <services.json> <edges.txt>\n');
  process.exit(2);
}
try {
  const services = JSON.parse(readFileSync(servicesFile, 'utf8')) as Record<string, string>;
  const edges = readFileSync(edgesFile, 'utf8')
    .split('\n')
    .map((l) => l.replace(/#.*/, '').trim())
    .filter((l) => l !== '');
  process.stdout.write(renderNatsAuth({ services, edges }));
} catch (e) {
  process.stderr.write(
    `render-nats-auth: ${e instanceof NatsAuthConfigError || e instanceof SyntaxError ? e.message : String(e)}\n`,
  );
  process.exit(1);
}
