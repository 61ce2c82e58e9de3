import { PlacementConflictError } from '../model/errors';
import type { Placement } from '../model/placement';
import type { ClusterSnapshot } from './cluster-snapshot';

/**
 * The snapshot with every GPU of `placement` reserved under `placement.id`. Pure: the input is left
 * alone and the result shares all untouched hosts with it (O(hosts) pointer copies, no GPU copies).
 * Throws `PlacementConflictError` when a GPU is unknown or held by another placement; reserving a
 * GPU that this placement already holds is a no-op, so applying twice equals applying once.
 */
export const applyPlacement = (snapshot: ClusterSnapshot, placement: Placement): ClusterSnapshot => {
  const inv = snapshot.inventory;
  const freeMask = snapshot.freeMask.slice();
  const owners = snapshot.owners.slice();
  const copied = new Set<number>();
  for (const allocation of placement.allocations) {
    for (const node of allocation.nodes) {
      for (const uuid of node.gpuUuids) {
        const g = inv.gpuByUuid.get(uuid);
        if (g === undefined) {
          throw new PlacementConflictError(
            uuid,
            null,
            `placement ${placement.id}: GPU ${uuid} is not in the snapshot`,
          );
        }
        const gpu = inv.gpus[g]!;
        const h = gpu.hostIndex;
        const holder = owners[h]?.[gpu.local] ?? null;
        if (holder === placement.id) continue;
        if (holder !== null) {
          throw new PlacementConflictError(
            uuid,
            holder,
            `placement ${placement.id}: GPU ${uuid} on ${inv.hosts[h]!.id} is held by ${holder}`,
          );
        }
        if (!copied.has(h)) {
          owners[h] = owners[h]?.slice() ?? new Array<string | null>(inv.hosts[h]!.gpuCount).fill(null);
          copied.add(h);
        }
        (owners[h] as (string | null)[])[gpu.local] = placement.id;
        freeMask[h] = (freeMask[h]! & ~(1 << gpu.local)) >>> 0;
      }
    }
  }
  return { inventory: inv, freeMask, owners, version: snapshot.version + 1 };
};

/**
 * The snapshot with every GPU held by `placement` freed. Idempotent: releasing twice, or releasing
 * a placement that holds nothing, changes nothing; GPUs held by other placements are never touched.
 * Given only an id, every host is scanned; given the placement, only its hosts.
 */
export const releasePlacement = (
  snapshot: ClusterSnapshot,
  placement: Placement | string,
): ClusterSnapshot => {
  const inv = snapshot.inventory;
  const id = typeof placement === 'string' ? placement : placement.id;
  const candidates: Iterable<number> =
    typeof placement === 'string'
      ? snapshot.owners.keys()
      : new Set(
          placement.allocations.flatMap((a) =>
            a.nodes.map((n) => inv.hostById.get(n.hostId)).filter((h): h is number => h !== undefined),
          ),
        );
  let freeMask: Uint32Array | null = null;
  let owners: (readonly (string | null)[] | null)[] | null = null;
  for (const h of candidates) {
    const hostOwners = snapshot.owners[h];
    if (!hostOwners?.includes(id)) continue;
    freeMask ??= snapshot.freeMask.slice();
    owners ??= snapshot.owners.slice();
    let mask = freeMask[h]!;
    const next = hostOwners.map((o, local) => {
      if (o !== id) return o;
      mask |= 1 << local;
      return null;
    });
    freeMask[h] = mask >>> 0;
    owners[h] = next.every((o) => o === null) ? null : next;
  }
  if (freeMask === null || owners === null) return snapshot;
  return { inventory: inv, freeMask, owners, version: snapshot.version + 1 };
};
