/** Base of every error the scheduling core throws; `code` is what callers branch on. */
export abstract class SchedulingError extends Error {
  abstract readonly code: string;
}

/** The snapshot input is malformed (duplicate ids, > 32 GPUs on a host, unknown site …). */
export class InvalidSnapshotError extends SchedulingError {
  readonly code = 'INVALID_SNAPSHOT' as const;
  override readonly name = 'InvalidSnapshotError';
}

/** `applyPlacement` was asked to reserve a GPU that is already reserved or unknown: a stale placement. */
export class PlacementConflictError extends SchedulingError {
  readonly code = 'PLACEMENT_CONFLICT' as const;
  override readonly name = 'PlacementConflictError';
  constructor(
    readonly gpuUuid: string,
    readonly heldBy: string | null,
    message: string,
  ) {
    super(message);
  }
}

export const isSchedulingError = (e: unknown): e is SchedulingError => e instanceof SchedulingError;
export const isPlacementConflict = (e: unknown): e is PlacementConflictError =>
  e instanceof PlacementConflictError;
