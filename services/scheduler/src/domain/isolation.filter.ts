import { isolationAtLeast, type IsolationLevel } from '@gpunet/contracts';
import { type FilterPlugin, type Status, SUCCESS, unresolvable } from '@gpunet/scheduling';

export const ISOLATION = 'isolation';
export const IsolationReason = {
  /** The edge runs ranks with less isolation than the job's subnet requires. */
  IsolationTooWeak: 'IsolationTooWeak',
} as const;

/** What the filter judges by: the job's minimum, whose rule it is, and each candidate's level. */
export interface IsolationView {
  /** The job's terms' `trust.minimumIsolation`. */
  readonly minimum: IsolationLevel;
  /** Whose rule it is, named in reasons: `subnet 'demo'`. */
  readonly setBy: string;
  /** By provider id: the isolation discovery says the edge runs ranks with. */
  readonly levels: ReadonlyMap<string, IsolationLevel>;
}

/**
 * A job is offered only edges that run ranks at or above its subnet's minimum isolation (ADR 0072):
 * a subnet that settles real value never gets host processes. A GPU filter, placed after the
 * trust filters, so that a GPU counts here only when it would otherwise serve the job. Waiting does
 * not help until the edge reports another isolation, an inventory change that wakes the job. An
 * edge discovery did not name a level for is taken as host processes, as discovery takes an edge
 * that reports none.
 */
export const isolationFilter = (view: IsolationView): FilterPlugin => ({
  name: ISOLATION,
  gpuFilter: () => {
    if (view.minimum === 'host-process') return null;
    const statuses = new Map<IsolationLevel, Status>();
    return (_gpu, _host, provider) => {
      const level = view.levels.get(provider.id) ?? 'host-process';
      if (isolationAtLeast(level, view.minimum)) return SUCCESS;
      let st = statuses.get(level);
      if (st === undefined) {
        st = unresolvable(
          ISOLATION,
          IsolationReason.IsolationTooWeak,
          `edge runs ${level}; ${view.setBy} requires ${view.minimum}`,
        );
        statuses.set(level, st);
      }
      return st;
    };
  },
  describe: () => (view.minimum === 'host-process' ? null : `isolation ${view.minimum} or stronger`),
  // Its reasons name the edge's own level, so a waiting job's sentence quotes one.
  namesFigures: true,
});
