/**
 * A domain event as deciders produce it: the registered type and its payload. Metadata (ids, stream
 * version, time, causation) is added by the command handler in `libs/eventing`, outside the domain.
 */
export interface DomainEvent<T extends string = string, D = unknown> {
  readonly type: T;
  readonly data: D;
}

/**
 * An aggregate as a pure decider (emmett): `decide` turns a command and the current state into events,
 * `evolve` folds one event into the state. No clock, randomness or I/O: time and ids arrive inside
 * the command. Expected business outcomes (a rejection, say) are events; `decide` throws only for
 * broken invariants, with an error that carries a `code`.
 */
export interface Decider<Command, Event extends DomainEvent, State> {
  decide(command: Command, state: State): readonly Event[];
  evolve(state: State, event: Event): State;
  readonly initialState: State;
}

/** The state after folding `events` into the decider's initial state. */
export const foldEvents = <E extends DomainEvent, S>(
  decider: Pick<Decider<unknown, E, S>, 'evolve' | 'initialState'>,
  events: readonly E[],
): S => events.reduce(decider.evolve, decider.initialState);

/** Base class for errors a decider throws when a command breaks an invariant. Never retried. */
export class DomainError extends Error {
  override readonly name: string = 'DomainError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
