import { type Decider, type DomainEvent, DomainError } from '@gpunet/contracts';
import { describe, expect, it } from 'vitest';
import { given } from '../src';

// A tiny GPU-reservation aggregate, enough to exercise every path of the DSL.
type Command = { type: 'Reserve'; gpus: number } | { type: 'Release' };
type Event = DomainEvent<'GpusReserved', { gpus: number }> | DomainEvent<'GpusReleased', { gpus: number }>;
interface State {
  readonly reserved: number;
}

class OverReservedError extends DomainError {
  override readonly name = 'OverReservedError';
  constructor(wanted: number) {
    super('OVER_RESERVED', `cannot reserve ${wanted} GPUs on top of an existing reservation`);
  }
}

const reservation: Decider<Command, Event, State> = {
  initialState: { reserved: 0 },
  decide: (command, state) => {
    switch (command.type) {
      case 'Reserve':
        if (state.reserved > 0) throw new OverReservedError(command.gpus);
        return [{ type: 'GpusReserved', data: { gpus: command.gpus } }];
      case 'Release':
        return state.reserved === 0 ? [] : [{ type: 'GpusReleased', data: { gpus: state.reserved } }];
    }
  },
  evolve: (state, event) => {
    switch (event.type) {
      case 'GpusReserved':
        return { reserved: state.reserved + event.data.gpus };
      case 'GpusReleased':
        return { reserved: state.reserved - event.data.gpus };
    }
  },
};

const reserved = (gpus: number): Event => ({ type: 'GpusReserved', data: { gpus } });

describe('given / when / then', () => {
  it('passes when the decided events match', () => {
    given(reservation)
      .when({ type: 'Reserve', gpus: 4 })
      .then([reserved(4)]);
    given(reservation, [reserved(4)])
      .when({ type: 'Release' })
      .then([{ type: 'GpusReleased', data: { gpus: 4 } }]);
    given(reservation).when({ type: 'Release' }).then([]);
  });

  it('fails with a diff when they do not', () => {
    const failure = (() => {
      try {
        given(reservation)
          .when({ type: 'Reserve', gpus: 4 })
          .then([reserved(8)]);
      } catch (e) {
        return e as Error & { expected?: unknown; actual?: unknown };
      }
      return undefined;
    })();
    expect(failure?.message).toContain('events decided for command Reserve');
    expect(failure?.expected).toEqual([reserved(8)]);
    expect(failure?.actual).toEqual([reserved(4)]);
  });

  it('reports a throw where events were expected, keeping the error as the cause', () => {
    let failure: Error | undefined;
    try {
      given(reservation, [reserved(1)])
        .when({ type: 'Reserve', gpus: 2 })
        .then([reserved(2)]);
    } catch (e) {
      failure = e as Error;
    }
    expect(failure?.message).toBe(
      'expected command Reserve to decide events, but it threw OverReservedError [OVER_RESERVED]: cannot reserve 2 GPUs on top of an existing reservation',
    );
    expect(failure?.cause).toBeInstanceOf(OverReservedError);
  });

  it('thenThrows matches by class, by code, by name and by message, and returns the error', () => {
    const when = given(reservation, [reserved(1)]).when({ type: 'Reserve', gpus: 2 });
    expect(when.thenThrows(OverReservedError)).toBeInstanceOf(OverReservedError);
    when.thenThrows(DomainError);
    when.thenThrows({ code: 'OVER_RESERVED' });
    when.thenThrows({ name: 'OverReservedError', message: /existing reservation/ });
    when.thenThrows({ message: 'cannot reserve 2 GPUs' });
  });

  it('thenThrows fails on the wrong error and when nothing is thrown', () => {
    const when = given(reservation, [reserved(1)]).when({ type: 'Reserve', gpus: 2 });
    expect(() => when.thenThrows(TypeError)).toThrow(/OverReservedError \[OVER_RESERVED\]/);
    expect(() => when.thenThrows({ code: 'SOMETHING_ELSE' })).toThrow(/error thrown for command Reserve/);
    expect(() => when.thenThrows({ message: /no such text/ })).toThrow(/message/);
    expect(() => given(reservation).when({ type: 'Reserve', gpus: 2 }).thenThrows(OverReservedError)).toThrow(
      'expected command Reserve to throw OverReservedError, but it decided [{"type":"GpusReserved","data":{"gpus":2}}]',
    );
  });

  it('thenState folds history and decided events', () => {
    given(reservation, [reserved(2)])
      .when({ type: 'Release' })
      .thenState({ reserved: 0 });
    given(reservation)
      .when({ type: 'Reserve', gpus: 3 })
      .thenState((state) => expect(state.reserved).toBe(3));
    expect(() => given(reservation).when({ type: 'Reserve', gpus: 3 }).thenState({ reserved: 4 })).toThrow(
      /state after command Reserve/,
    );
  });

  it('runs decide once however many assertions follow', () => {
    let calls = 0;
    const counting: Decider<Command, Event, State> = {
      ...reservation,
      decide: (c, s) => {
        calls++;
        return reservation.decide(c, s);
      },
    };
    const when = given(counting).when({ type: 'Reserve', gpus: 1 });
    when.then([reserved(1)]);
    when.thenState({ reserved: 1 });
    expect(calls).toBe(1);
  });

  it('refuses to be awaited', () => {
    const when = given(reservation).when({ type: 'Release' }) as unknown as { then(f: () => void): void };
    expect(() => when.then(() => undefined)).toThrow(/not a promise/);
  });
});
