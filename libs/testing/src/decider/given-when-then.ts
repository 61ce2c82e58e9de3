import { type Decider, type DomainEvent, foldEvents } from '@gpunet/contracts';
import { assert, expect } from 'vitest';

/** A constructor of errors, for `thenThrows(JobNotFoundError)`. */
export type ErrorClass = abstract new (...args: never[]) => Error;

/** What `thenThrows` accepts: an error class, or fields the thrown error must have. */
export type ExpectedError =
  | ErrorClass
  | {
      /** The error's `code` (what callers branch on). */
      readonly code?: string;
      readonly name?: string;
      /** A substring or pattern of the message. Prefer `code`: messages are for people. */
      readonly message?: string | RegExp;
    };

type Outcome<E> = { readonly events: readonly E[] } | { readonly error: unknown };

const describeCommand = (command: unknown): string =>
  typeof command === 'object' && command !== null && 'type' in command
    ? `command ${String(command.type)}`
    : 'the command';

const describeError = (error: unknown): string =>
  error instanceof Error
    ? `${error.name}${'code' in error ? ` [${String(error.code)}]` : ''}: ${error.message}`
    : String(error);

/**
 * The outcome of one command on a decider whose history is known. Each assertion uses vitest's
 * `expect`, so a mismatch prints a diff of expected and actual events or state.
 *
 * Not a promise, despite `then`: never `await` it (awaiting calls `then` with functions, which it
 * rejects with an explanation).
 */
export class DeciderWhen<C, E extends DomainEvent, S> {
  #outcome: Outcome<E> | undefined;

  constructor(
    private readonly decider: Decider<C, E, S>,
    private readonly history: readonly E[],
    private readonly command: C,
  ) {}

  /** The events `decide` returns must equal `expected` (deep equality, in order). */
  then(expected: readonly E[]): void {
    if (typeof expected === 'function') {
      throw new TypeError(
        'given(...).when(...) is not a promise: call .then(expectedEvents) instead of awaiting it',
      );
    }
    const events = this.#events();
    expect(events, `events decided for ${describeCommand(this.command)}`).toEqual(expected);
  }

  /**
   * `decide` must throw an error that is an instance of `expected` (a class) or has its fields
   * (`{ code }`, `{ name }`, `{ message }`). Returns the error for further assertions.
   */
  thenThrows(expected: ExpectedError): Error {
    const outcome = this.#run();
    if (!('error' in outcome)) {
      assert.fail(
        `expected ${describeCommand(this.command)} to throw ${describeExpected(expected)}, but it decided ${JSON.stringify(outcome.events)}`,
      );
    }
    const { error } = outcome;
    const label = `error thrown for ${describeCommand(this.command)}`;
    if (typeof expected === 'function') {
      expect(error, `${label} (${describeError(error)})`).toBeInstanceOf(expected);
    } else {
      const { message, ...fields } = expected;
      expect(error, label).toMatchObject(fields);
      if (message !== undefined) expect((error as Error).message, `${label}: message`).toMatch(message);
    }
    if (!(error instanceof Error)) assert.fail(`${label} is not an Error: ${String(error)}`);
    return error;
  }

  /**
   * The state after the history and the decided events must equal `expected`, or satisfy it when
   * `expected` is a function that asserts on the state.
   */
  thenState(expected: S | ((state: S) => void)): void {
    const events = this.#events();
    const state = foldEvents(this.decider, [...this.history, ...events]);
    if (typeof expected === 'function') (expected as (state: S) => void)(state);
    else expect(state, `state after ${describeCommand(this.command)}`).toEqual(expected);
  }

  #run(): Outcome<E> {
    if (this.#outcome === undefined) {
      const state = foldEvents(this.decider, this.history);
      try {
        this.#outcome = { events: this.decider.decide(this.command, state) };
      } catch (error) {
        this.#outcome = { error };
      }
    }
    return this.#outcome;
  }

  #events(): readonly E[] {
    const outcome = this.#run();
    if ('error' in outcome) {
      // Keep the original error (and its stack) as the cause: it is the thing to debug.
      throw new Error(
        `expected ${describeCommand(this.command)} to decide events, but it threw ${describeError(outcome.error)}`,
        {
          cause: outcome.error,
        },
      );
    }
    return outcome.events;
  }
}

const describeExpected = (expected: ExpectedError): string =>
  typeof expected === 'function'
    ? expected.name
    : JSON.stringify(expected, (_k, v: unknown) => (v instanceof RegExp ? String(v) : v));

/** A decider with a history, waiting for the command under test. */
export class DeciderGiven<C, E extends DomainEvent, S> {
  constructor(
    private readonly decider: Decider<C, E, S>,
    private readonly history: readonly E[],
  ) {}

  /** Runs `decide(command, state)` (lazily, once) where state folds the history. */
  when(command: C): DeciderWhen<C, E, S> {
    return new DeciderWhen(this.decider, this.history, command);
  }
}

/**
 * Given/When/Then for deciders (emmett's DeciderSpecification):
 *
 * ```ts
 * given(jobDecider, [jobSubmitted]).when(placeJob).then([jobPlaced]);
 * given(jobDecider, []).when(placeJob).thenThrows({ code: 'JOB_NOT_FOUND' });
 * given(jobDecider, [jobSubmitted]).when(placeJob).thenState({ status: 'placed' });
 * ```
 *
 * @param events the history: what happened to the aggregate before the command. Default none.
 */
export const given = <C, E extends DomainEvent, S>(
  decider: Decider<C, E, S>,
  events: readonly E[] = [],
): DeciderGiven<C, E, S> => new DeciderGiven(decider, events);
