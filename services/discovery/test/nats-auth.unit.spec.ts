import { createUser } from '@nats-io/nkeys';
import { describe, expect, it } from 'vitest';
import {
  edgePermissions,
  NatsAuthConfigError,
  renderNatsAuth,
} from '../src/infra/nats-auth/nats-auth.config';

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
});
