import {
  canonicalJson,
  type Decider,
  DomainError,
  type EdgeReservation,
  type Host,
  hostIdentity,
  type Inventory,
  type PayloadOf,
  type PolicySummary,
  type ProviderDeregistered,
  type ProviderInventoryChanged,
  type ProviderOffline,
  type ProviderOnline,
  type ProviderPolicyChanged,
  type ProviderRegistered,
  type ProviderReservationsChanged,
} from '@gpunet/contracts';

/** The provider aggregate's events (`discovery.provider.*`). */
export type ProviderEvent =
  | { readonly type: 'provider.registered'; readonly data: PayloadOf<typeof ProviderRegistered> }
  | { readonly type: 'provider.inventory-changed'; readonly data: PayloadOf<typeof ProviderInventoryChanged> }
  | { readonly type: 'provider.policy-changed'; readonly data: PayloadOf<typeof ProviderPolicyChanged> }
  | {
      readonly type: 'provider.reservations-changed';
      readonly data: PayloadOf<typeof ProviderReservationsChanged>;
    }
  | { readonly type: 'provider.online'; readonly data: PayloadOf<typeof ProviderOnline> }
  | { readonly type: 'provider.offline'; readonly data: PayloadOf<typeof ProviderOffline> }
  | { readonly type: 'provider.deregistered'; readonly data: PayloadOf<typeof ProviderDeregistered> };

/** Commands, made from verified edge reports (with their sequence) and from liveness. */
export type ProviderCommand =
  | {
      readonly type: 'Register';
      readonly providerId: string;
      readonly publicKey: string;
      readonly sequence: number;
      readonly at: string;
      readonly name: string;
      readonly agentVersion: string;
      readonly host: Host;
      readonly inventory: Inventory;
      readonly policy: PolicySummary;
    }
  | {
      readonly type: 'ReportInventory';
      readonly providerId: string;
      readonly sequence: number;
      readonly at: string;
      readonly host: Host;
      readonly inventory: Inventory;
    }
  | {
      readonly type: 'ReportPolicy';
      readonly providerId: string;
      readonly sequence: number;
      readonly at: string;
      readonly policy: PolicySummary;
    }
  | {
      readonly type: 'ReportReservations';
      readonly providerId: string;
      readonly sequence: number;
      readonly at: string;
      readonly reservations: readonly EdgeReservation[];
    }
  | {
      readonly type: 'Deregister';
      readonly providerId: string;
      readonly sequence: number;
      readonly at: string;
      readonly reason: string;
    }
  | { readonly type: 'MarkOnline'; readonly providerId: string; readonly at: string }
  | {
      readonly type: 'MarkOffline';
      readonly providerId: string;
      readonly at: string;
      readonly lastSeenAt: string | null;
    };

export type ProviderState =
  | { readonly status: 'unknown' }
  | {
      readonly status: 'online' | 'offline' | 'deregistered';
      readonly providerId: string;
      readonly publicKey: string;
      /** Highest report sequence applied; older or repeated reports change nothing. */
      readonly sequence: number;
      /** Canonical JSON of what is known, to tell a change from a repetition. */
      readonly hostAndInventory: string;
      readonly policy: string;
      readonly reservations: string;
    };

/** A report about a provider discovery never saw register (its registration is missing or was refused). */
export class ProviderNotRegisteredError extends DomainError {
  override readonly name = 'ProviderNotRegisteredError';
  constructor(providerId: string) {
    super('PROVIDER_NOT_REGISTERED', `provider ${providerId} reported before it registered`);
  }
}

/** A registration whose key differs from the one the provider registered with. */
export class ProviderKeyChangedError extends DomainError {
  override readonly name = 'ProviderKeyChangedError';
  constructor(providerId: string) {
    super('PROVIDER_KEY_CHANGED', `provider ${providerId} registered again with another key`);
  }
}

const hostAndInventory = (host: Host, inventory: Inventory): string =>
  canonicalJson({ host: hostIdentity(host), inventory });
const reservationsKey = (reservations: readonly EdgeReservation[]): string =>
  canonicalJson([...reservations].sort((a, b) => (a.reservationId < b.reservationId ? -1 : 1)));

/**
 * The provider aggregate (one stream per edge, `provider-<edgeId>`). Edge reports carry a sequence
 * number; one not newer than what was applied is a repetition (redelivery, reconnect) or stale and
 * decides nothing. A report that repeats what is known decides nothing either, so the event history
 * holds changes only. Liveness comes from outside (heartbeats measured with discovery's clock).
 */
export const providerDecider: Decider<ProviderCommand, ProviderEvent, ProviderState> = {
  initialState: { status: 'unknown' },

  decide(command, state) {
    const { providerId } = command;
    switch (command.type) {
      case 'Register': {
        const registered: ProviderEvent = {
          type: 'provider.registered',
          data: {
            providerId,
            sequence: command.sequence,
            publicKey: command.publicKey,
            name: command.name,
            agentVersion: command.agentVersion,
            at: command.at,
            host: command.host,
            inventory: command.inventory,
            policy: command.policy,
          },
        };
        const online: ProviderEvent = { type: 'provider.online', data: { providerId, at: command.at } };
        if (state.status === 'unknown' || state.status === 'deregistered') return [registered, online];
        if (state.publicKey !== command.publicKey) throw new ProviderKeyChangedError(providerId);
        if (command.sequence <= state.sequence) return [];
        const events: ProviderEvent[] = [];
        if (state.hostAndInventory !== hostAndInventory(command.host, command.inventory))
          events.push({
            type: 'provider.inventory-changed',
            data: {
              providerId,
              sequence: command.sequence,
              at: command.at,
              host: command.host,
              inventory: command.inventory,
            },
          });
        if (state.policy !== canonicalJson(command.policy))
          events.push({
            type: 'provider.policy-changed',
            data: { providerId, sequence: command.sequence, at: command.at, policy: command.policy },
          });
        if (state.status === 'offline') events.push(online);
        return events;
      }
      case 'ReportInventory':
      case 'ReportPolicy':
      case 'ReportReservations':
      case 'Deregister': {
        if (state.status === 'unknown') throw new ProviderNotRegisteredError(providerId);
        if (command.sequence <= state.sequence || state.status === 'deregistered') return [];
        if (command.type === 'Deregister')
          return [
            {
              type: 'provider.deregistered',
              data: { providerId, sequence: command.sequence, at: command.at, reason: command.reason },
            },
          ];
        if (command.type === 'ReportInventory')
          return state.hostAndInventory === hostAndInventory(command.host, command.inventory)
            ? []
            : [
                {
                  type: 'provider.inventory-changed',
                  data: {
                    providerId,
                    sequence: command.sequence,
                    at: command.at,
                    host: command.host,
                    inventory: command.inventory,
                  },
                },
              ];
        if (command.type === 'ReportPolicy')
          return state.policy === canonicalJson(command.policy)
            ? []
            : [
                {
                  type: 'provider.policy-changed',
                  data: { providerId, sequence: command.sequence, at: command.at, policy: command.policy },
                },
              ];
        return state.reservations === reservationsKey(command.reservations)
          ? []
          : [
              {
                type: 'provider.reservations-changed',
                data: {
                  providerId,
                  sequence: command.sequence,
                  at: command.at,
                  reservations: [...command.reservations],
                },
              },
            ];
      }
      case 'MarkOnline':
        return state.status === 'offline'
          ? [{ type: 'provider.online', data: { providerId, at: command.at } }]
          : [];
      case 'MarkOffline':
        return state.status === 'online'
          ? [
              {
                type: 'provider.offline',
                data: {
                  providerId,
                  at: command.at,
                  lastSeenAt: command.lastSeenAt,
                  reason: 'heartbeat-timeout',
                },
              },
            ]
          : [];
      default: {
        const never: never = command;
        return never;
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'provider.registered':
        return {
          status: 'offline',
          providerId: event.data.providerId,
          publicKey: event.data.publicKey,
          sequence: event.data.sequence,
          hostAndInventory: hostAndInventory(event.data.host, event.data.inventory),
          policy: canonicalJson(event.data.policy),
          reservations: reservationsKey([]),
        };
      case 'provider.inventory-changed':
        return state.status === 'unknown'
          ? state
          : {
              ...state,
              sequence: Math.max(state.sequence, event.data.sequence),
              hostAndInventory: hostAndInventory(event.data.host, event.data.inventory),
            };
      case 'provider.policy-changed':
        return state.status === 'unknown'
          ? state
          : {
              ...state,
              sequence: Math.max(state.sequence, event.data.sequence),
              policy: canonicalJson(event.data.policy),
            };
      case 'provider.reservations-changed':
        return state.status === 'unknown'
          ? state
          : {
              ...state,
              sequence: Math.max(state.sequence, event.data.sequence),
              reservations: reservationsKey(event.data.reservations),
            };
      case 'provider.online':
        return state.status === 'unknown' ? state : { ...state, status: 'online' };
      case 'provider.offline':
        return state.status === 'unknown' ? state : { ...state, status: 'offline' };
      case 'provider.deregistered':
        return state.status === 'unknown'
          ? state
          : { ...state, sequence: Math.max(state.sequence, event.data.sequence), status: 'deregistered' };
      default: {
        const never: never = event;
        return never;
      }
    }
  },
};
