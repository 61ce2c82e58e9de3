import { ProbeLinksOnEdge, ReleaseOnEdge, ReserveOnEdge, RunBenchmarkOnEdge } from '@gpunet/contracts';
import { createUser } from '@nats-io/nkeys';
import { describe, expect, it } from 'vitest';
import {
  edgePermissions,
  NatsAuthConfigError,
  renderNatsAuth,
  SERVICE_PERMISSIONS,
} from '../src/infra/nats-auth/nats-auth.config';

/** NATS subject matching: `*` one token, `>` the rest. */
const covers = (pattern: string, subject: string): boolean => {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length || (p[i] !== '*' && p[i] !== s[i])) return false;
  }
  return p.length === s.length;
};

describe('renderNatsAuth', () => {
  const discovery = createUser().getPublicKey();
  const edge = createUser().getPublicKey();

  it('confines an edge to its own subjects', () => {
    expect(edgePermissions(edge)).toEqual({
      publish: [`edge.${edge}.>`],
      subscribe: [`cmd.edge.${edge}.>`, `_INBOX_${edge}.>`],
    });
    const text = renderNatsAuth({ services: { discovery }, edges: [edge] });
    expect(text).toContain(`{ nkey: ${edge}, permissions: {`);
    expect(text).toContain(`publish: { allow: ["edge.${edge}.>"] }`);
    expect(text).not.toContain('no_auth_user');
  });

  it.each([
    ['a malformed key', { services: {}, edges: ['UNOTAKEY'] }, 'not a valid user nkey'],
    [
      'a key with a bad checksum',
      { services: {}, edges: [`${edge.slice(0, -1)}${edge.endsWith('A') ? 'B' : 'A'}`] },
      'not a valid user nkey',
    ],
    ['an account key', { services: {}, edges: [`A${edge.slice(1)}`] }, 'not a valid user nkey'],
    ['a key listed twice', { services: { discovery: edge }, edges: [edge] }, 'listed twice'],
    ['a bad service name', { services: { 'Disc Overy': discovery }, edges: [] }, 'service name'],
  ])('refuses %s', (_name, options, message) => {
    expect(() => renderNatsAuth(options)).toThrow(NatsAuthConfigError);
    expect(() => renderNatsAuth(options)).toThrow(message);
  });

  it.each([
    ['benchmarking', RunBenchmarkOnEdge.type, RunBenchmarkOnEdge],
    ['benchmarking', ProbeLinksOnEdge.type, ProbeLinksOnEdge],
    ['scheduler', ReserveOnEdge.type, ReserveOnEdge],
    ['scheduler', ReleaseOnEdge.type, ReleaseOnEdge],
  ] as const)('lets %s send %s to any edge, and nothing else of the edge’s', (service, _type, command) => {
    const allowed = SERVICE_PERMISSIONS[service]!.publish;
    expect(allowed.some((p) => covers(p, command.subject({ edgeId: edge })))).toBe(true);
    expect(allowed.some((p) => covers(p, `edge.${edge}.heartbeat.v1`))).toBe(false);
    expect(allowed.some((p) => covers(p, `cmd.edge.${edge}.attach-overlay.v1`))).toBe(false);
  });
});
