import {
  baselines,
  type ClusterSnapshot,
  type GangRequest,
  type Placement,
  schedule,
  type ScheduleOptions,
  singleGang,
} from '@gpunet/scheduling';

/** A placement policy under test: the scheduler, or a baseline through the same filters. */
export interface Policy {
  readonly name: string;
  place(snapshot: ClusterSnapshot, id: string, gang: GangRequest, seed: number): Placement | null;
}

export const gpunet = (options: Omit<ScheduleOptions, 'seed'> = {}, name = 'gpunet'): Policy => ({
  name,
  place: (snapshot, id, gang, seed) => {
    const r = schedule(snapshot, singleGang(id, gang), { ...options, seed });
    return r.code === 'Success' ? r.placement : null;
  },
});

export const firstFit: Policy = { name: 'first-fit', place: (s, id, g) => baselines.firstFit(s, id, g) };
export const bestFit: Policy = { name: 'best-fit', place: (s, id, g) => baselines.bestFit(s, id, g) };
export const rayPack: Policy = { name: 'ray-pack', place: (s, id, g) => baselines.rayPack(s, id, g) };
