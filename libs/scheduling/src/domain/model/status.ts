/**
 * Plugin and result statuses, as in the Kubernetes scheduler framework. They drive what the service
 * does next:
 * - `Success` — go on;
 * - `Unschedulable` — not now: GPUs that would fit are busy; requeue on capacity events;
 * - `UnschedulableAndUnresolvable` — waiting does not help (no such GPUs, impossible shape); tell
 *   the orchestrator, do not requeue until the inventory changes;
 * - `Error` — a plugin broke an invariant (a bug): log, alert, retry with backoff.
 */
export type StatusCode = 'Success' | 'Unschedulable' | 'UnschedulableAndUnresolvable' | 'Error';

export interface Status {
  readonly code: StatusCode;
  /** The plugin that decided (empty for Success). */
  readonly plugin: string;
  /** A stable reason constant of that plugin, e.g. `InsufficientVram`; branch on it, never on `message`. */
  readonly reason: string;
  readonly message: string;
}

export const SUCCESS: Status = Object.freeze({ code: 'Success', plugin: '', reason: '', message: '' });

export const unschedulable = (plugin: string, reason: string, message: string): Status => ({
  code: 'Unschedulable',
  plugin,
  reason,
  message,
});

export const unresolvable = (plugin: string, reason: string, message: string): Status => ({
  code: 'UnschedulableAndUnresolvable',
  plugin,
  reason,
  message,
});

export const pluginError = (plugin: string, reason: string, message: string): Status => ({
  code: 'Error',
  plugin,
  reason,
  message,
});

/** The worse of two statuses (Error > Unresolvable > Unschedulable > Success). */
export const worse = (a: Status, b: Status): Status => (rank(b.code) > rank(a.code) ? b : a);

const rank = (c: StatusCode): number => {
  switch (c) {
    case 'Success':
      return 0;
    case 'Unschedulable':
      return 1;
    case 'UnschedulableAndUnresolvable':
      return 2;
    case 'Error':
      return 3;
    default: {
      const never: never = c;
      return never;
    }
  }
};
