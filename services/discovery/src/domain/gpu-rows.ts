import {
  type EdgeReservation,
  type Inventory,
  modelMatches,
  modelWords,
  type PolicySummary,
} from '@gpunet/contracts';

/** One row of the `gpus` projection table. */
export interface GpuRow {
  readonly uuid: string;
  readonly index: number;
  readonly vendor: 'nvidia' | 'amd';
  readonly model: string;
  /** ` NVIDIA H100 80GB HBM3 `: the model's words between spaces, for word-sequence matching. */
  readonly modelWords: string;
  readonly vramBytes: number;
  /** `major × 10 + minor`; null when unknown (never for a usable NVIDIA GPU). */
  readonly computeCapability: number | null;
  readonly cudaVersion: string | null;
  readonly rocmVersion: string | null;
  readonly architecture: string | null;
  readonly pciBusId: string | null;
  readonly mig: boolean;
  readonly shared: boolean;
  /** The reservation holding it, or null. */
  readonly reservedBy: string | null;
  /** Floor per GPU-hour in minor units of the provider's asset; null: none. */
  readonly priceFloorMinor: string | null;
  readonly directPeers: readonly number[];
  /** Offered to the scheduler: provider online, shared, whole (not MIG) and not reserved. */
  readonly available: boolean;
}

/** The floor for a GPU model: the first entry whose words it contains, else the default. */
export const priceFloorFor = (policy: PolicySummary, model: string): string | null =>
  policy.pricing.floors.find((f) => modelMatches(model, f.model))?.perGpuHourMinor ??
  policy.pricing.defaultFloorMinor;

/**
 * The GPU rows of one provider from what it reported: which GPUs it shares, which are held by a
 * reservation, their floors and NVLink/xGMI peers. Reservations are the edge's word: it prunes the
 * expired ones itself and reports, so discovery never judges expiry by a clock the edge does not share.
 */
export const gpuRows = (
  inventory: Inventory,
  policy: PolicySummary,
  reservations: readonly EdgeReservation[],
  online: boolean,
): GpuRow[] => {
  const shared = new Set(policy.sharedGpuUuids);
  const heldBy = new Map<string, string>();
  for (const r of reservations) for (const u of r.gpuUuids) heldBy.set(u, r.reservationId);
  return inventory.gpus.map((g) => {
    const reservedBy = heldBy.get(g.uuid) ?? null;
    const isShared = shared.has(g.uuid);
    return {
      uuid: g.uuid,
      index: g.index,
      vendor: g.vendor,
      model: g.model,
      modelWords: ` ${modelWords(g.model)} `,
      vramBytes: g.vramBytes,
      computeCapability: g.computeCapability
        ? g.computeCapability.major * 10 + g.computeCapability.minor
        : null,
      cudaVersion: g.cudaVersion,
      rocmVersion: g.rocmVersion,
      architecture: g.architecture,
      pciBusId: g.pciBusId,
      mig: g.mig.enabled,
      shared: isShared,
      reservedBy,
      priceFloorMinor: priceFloorFor(policy, g.model),
      directPeers: inventory.links
        .filter(
          (l) =>
            l.vendor === g.vendor &&
            (l.kind === 'nvlink' || l.kind === 'xgmi') &&
            (l.a === g.index || l.b === g.index),
        )
        .map((l) => (l.a === g.index ? l.b : l.a))
        .sort((a, b) => a - b),
      available: online && isShared && !g.mig.enabled && reservedBy === null,
    };
  });
};
