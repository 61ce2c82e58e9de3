/**
 * The NATS server's accounts, users and permissions for gpunet: every control-plane
 * service has its own user, every provider edge is a user whose nkey is its edge id, and the server
 * — not the edge's good will — confines each edge to its own subjects:
 *
 * - publish only `edge.<its id>.>` (its reports and heartbeats) and replies to requests it received;
 * - subscribe only `cmd.edge.<its id>.>` (its commands) and `_INBOX_<its id>.>` (its own replies,
 *   e.g. JetStream's acknowledgements of its reports).
 *
 * Edges therefore cannot publish another edge's heartbeat, read another edge's commands or replies,
 * touch JetStream's API, or speak for a service. Pure: renders text, reads nothing.
 */

import { fromPublic } from '@nats-io/nkeys';

const NKEY_USER = /^U[A-Z2-7]{55}$/;

const validUserKey = (key: string): boolean => {
  if (!NKEY_USER.test(key)) return false;
  try {
    fromPublic(key);
    return true;
  } catch {
    return false;
  }
};

/** What a control-plane service may publish and subscribe to. */
export interface ServicePermissions {
  readonly publish: readonly string[];
  readonly subscribe: readonly string[];
}

// Services share `_INBOX.>` for replies and use JetStream's API; edges have neither.
const JETSTREAM = ['$JS.API.>', '$JS.ACK.>', 'dlq.>'];

/** Each service's subjects. Services not listed get `defaultServicePermissions(name)`. */
export const SERVICE_PERMISSIONS: Readonly<Record<string, ServicePermissions>> = {
  discovery: {
    publish: [...JETSTREAM, 'discovery.>'],
    subscribe: ['_INBOX.>', 'edge.>', 'q.discovery.>', 'discovery.>'],
  },
  scheduler: {
    publish: [...JETSTREAM, 'scheduler.>', 'cmd.edge.*.reserve.v1', 'cmd.edge.*.release.v1', 'q.>'],
    subscribe: ['_INBOX.>', 'q.scheduler.>'],
  },
  benchmarking: {
    // Benchmarks (`cmd.edge.{id}.benchmark.v1`) and link probes (`cmd.edge.{id}.probe-links.v1`).
    publish: [...JETSTREAM, 'benchmarking.>', 'cmd.edge.*.benchmark.>', 'cmd.edge.*.probe-links.v1', 'q.>'],
    subscribe: ['_INBOX.>', 'q.benchmarking.>'],
  },
  execution: {
    publish: [...JETSTREAM, 'execution.>', 'cmd.edge.*.>', 'q.>'],
    subscribe: ['_INBOX.>', 'q.execution.>'],
  },
};

export const defaultServicePermissions = (name: string): ServicePermissions => ({
  publish: [...JETSTREAM, `${name}.>`, 'q.>'],
  subscribe: ['_INBOX.>', `q.${name}.>`],
});

/** An edge's permissions: its own subjects only. */
export const edgePermissions = (edgeId: string) => ({
  publish: [`edge.${edgeId}.>`],
  subscribe: [`cmd.edge.${edgeId}.>`, `_INBOX_${edgeId}.>`],
});

export interface NatsAuthOptions {
  /** Service name → its user's public nkey. */
  readonly services: Readonly<Record<string, string>>;
  /** Public nkeys (= edge ids) of the admitted edges. */
  readonly edges: readonly string[];
  /** Account that holds gpunet's subjects and JetStream. Default `GPUNET`. */
  readonly account?: string;
  /**
   * Let unauthenticated clients in as a user in an empty account that may do nothing (health
   * probes, test harnesses that wait for the port). Default false: unauthenticated clients are refused.
   */
  readonly probeUser?: boolean;
}

export class NatsAuthConfigError extends Error {
  override readonly name = 'NatsAuthConfigError';
  readonly code = 'NATS_AUTH_CONFIG' as const;
}

const q = (s: string): string => JSON.stringify(s);
const list = (items: readonly string[]): string => `[${items.map(q).join(', ')}]`;

/**
 * The `accounts { … }` block (and `no_auth_user` when asked) to include in the server's configuration
 * (see deploy/nats/). Refuses malformed or duplicated keys rather than writing a config the server
 * would read differently.
 */
export const renderNatsAuth = (options: NatsAuthOptions): string => {
  const account = options.account ?? 'GPUNET';
  if (!/^[A-Z][A-Z0-9_]{0,31}$/.test(account))
    throw new NatsAuthConfigError(`account name ${account} is not A-Z 0-9 _`);
  const seen = new Set<string>();
  const check = (key: string, what: string) => {
    if (!validUserKey(key))
      throw new NatsAuthConfigError(`${what}: ${key} is not a valid user nkey (U…, 56 characters)`);
    if (seen.has(key)) throw new NatsAuthConfigError(`${what}: ${key} is listed twice`);
    seen.add(key);
  };
  const users: string[] = [];
  for (const [name, key] of Object.entries(options.services).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (!/^[a-z][a-z0-9-]{0,31}$/.test(name))
      throw new NatsAuthConfigError(`service name ${name} is not a-z 0-9 -`);
    check(key, `service ${name}`);
    const p = SERVICE_PERMISSIONS[name] ?? defaultServicePermissions(name);
    users.push(
      `      # service: ${name}
      { nkey: ${key}, permissions: {
          publish: { allow: ${list(p.publish)} },
          subscribe: { allow: ${list(p.subscribe)} },
          allow_responses: true } }`,
    );
  }
  for (const key of [...options.edges].sort()) {
    check(key, 'edge');
    const p = edgePermissions(key);
    users.push(
      `      # edge
      { nkey: ${key}, permissions: {
          publish: { allow: ${list(p.publish)} },
          subscribe: { allow: ${list(p.subscribe)} },
          allow_responses: { max: 1, expires: "2m" } } }`,
    );
  }
  const probe = options.probeUser
    ? `
  # Unauthenticated clients land here and may do nothing.
  PROBE: {
    users: [
      { user: probe, password: ${q(`probe-${Math.random().toString(36).slice(2)}`)}, permissions: { publish: { deny: [">"] }, subscribe: { deny: [">"] } } }
    ]
  }`
    : '';
  return `# Generated by services/discovery/src/infra/nats-auth (deploy/nats/render-auth.sh). Do not edit by hand.
accounts {
  ${account}: {
    jetstream: enabled
    users: [
${users.join('\n')}
    ]
  }${probe}
}
${options.probeUser ? 'no_auth_user: probe\n' : ''}`;
};
