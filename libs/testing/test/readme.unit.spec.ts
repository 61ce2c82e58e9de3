// The examples in libs/testing/README.md are copied from this file and the int/contract specs; the
// last test checks that every README snippet still appears, line for line, in a spec file.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Decider, type DomainEvent, DomainError } from '@gpunet/contracts';
import { describe, expect, it } from 'vitest';
import { EventCollector, FakeClock, given, seededRandom } from '../src';

type Command = { type: 'Heartbeat'; at: string } | { type: 'Expire'; now: string };
type Event = DomainEvent<'EdgeOnline', { at: string }> | DomainEvent<'EdgeOffline', { at: string }>;
type State = { online: boolean; lastSeen?: string };
class UnknownEdgeError extends DomainError {
  constructor() {
    super('UNKNOWN_EDGE', 'no heartbeat yet');
  }
}
const liveness: Decider<Command, Event, State> = {
  initialState: { online: false },
  decide: (c, s) => {
    if (c.type === 'Heartbeat') return s.online ? [] : [{ type: 'EdgeOnline', data: { at: c.at } }];
    if (s.lastSeen === undefined) throw new UnknownEdgeError();
    return s.online && Date.parse(c.now) - Date.parse(s.lastSeen) > 30_000
      ? [{ type: 'EdgeOffline', data: { at: c.now } }]
      : [];
  },
  evolve: (s, e) =>
    e.type === 'EdgeOnline' ? { online: true, lastSeen: e.data.at } : { ...s, online: false },
};
const online = (at: string): Event => ({ type: 'EdgeOnline', data: { at } });
const offline = (at: string): Event => ({ type: 'EdgeOffline', data: { at } });
const t0 = '2030-01-01T00:00:00.000Z';
const t1 = '2030-01-01T00:01:00.000Z';

describe('README examples', () => {
  it('deciders', () => {
    given(liveness, [online(t0)])
      .when({ type: 'Expire', now: t1 })
      .then([offline(t1)]);
    given(liveness).when({ type: 'Expire', now: t1 }).thenThrows({ code: 'UNKNOWN_EDGE' });
    given(liveness).when({ type: 'Heartbeat', at: t0 }).thenState({ online: true, lastSeen: t0 });
  });

  it('fake clock', () => {
    const clock = new FakeClock('2030-01-01T00:00:00Z');
    const fired: string[] = [];
    clock.setTimeout(() => fired.push(clock.now().toISOString()), 30_000);
    clock.advance(60_000); // fires the timer at its own instant, 00:00:30
    expect(fired).toEqual(['2030-01-01T00:00:30.000Z']);
  });

  it('seeded random', () => {
    const rng = seededRandom('placement-property-1');
    const gpus = rng.int(1, 8);
    const region = rng.pick(['eu', 'us', 'ap']);
    expect(seededRandom('placement-property-1').int(1, 8)).toBe(gpus);
    expect(['eu', 'us', 'ap']).toContain(region);
  });

  it('event collector', async () => {
    const placed = new EventCollector<{ jobId: string }>('job.placed');
    setImmediate(() => placed.push({ jobId: 'j-1' })); // a subscription callback, say
    const event = await placed.waitFor((e) => e.jobId === 'j-1', { timeoutMs: 5_000 });
    expect(event.jobId).toBe('j-1');
  });

  it('every README snippet appears in a spec file', () => {
    const root = join(import.meta.dirname, '..');
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const specs = readdirSync(import.meta.dirname)
      .filter((f) => f.endsWith('.spec.ts'))
      .map((f) => readFileSync(join(import.meta.dirname, f), 'utf8'))
      .join('\n');
    const normalize = (s: string): string =>
      s
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '')
        .join('\n');
    const corpus = normalize(specs);
    const snippets = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => normalize(m[1]!));
    expect(snippets.length).toBeGreaterThan(3);
    for (const snippet of snippets) {
      for (const line of snippet.split('\n')) {
        // Imports in the README name the package (specs use '../src'); `// …` marks an elision.
        if (line.startsWith('import ') || line === '// …') continue;
        expect(corpus, `README line not found in any spec: ${line}`).toContain(line);
      }
    }
  });
});
