/**
 * A Vivaldi network coordinate with a height (Dabek et al., SIGCOMM 2004): a point in a 2-D plane
 * plus a non-negative height that models the access link every packet of the host crosses. The
 * predicted RTT between two hosts is the plane distance plus both heights:
 *
 *   rtt(a, b) ≈ ‖(x, y)ₐ − (x, y)_b‖ + heightₐ + height_b
 *
 * Units are the caller's; gpunet uses microseconds, as the scheduler's network model does.
 */
export interface Coordinate {
  readonly x: number;
  readonly y: number;
  readonly height: number;
}

export const ORIGIN: Coordinate = { x: 0, y: 0, height: 0 };

/** Predicted RTT between two coordinates. */
export const predictRtt = (a: Coordinate, b: Coordinate): number =>
  Math.hypot(a.x - b.x, a.y - b.y) + a.height + b.height;
