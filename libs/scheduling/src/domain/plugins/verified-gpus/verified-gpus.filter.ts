import type { FilterPlugin } from '../../framework/plugin';
import type { GpuVerification } from '../../model/snapshot-input';
import { type Status, SUCCESS, unschedulable } from '../../model/status';
import { trustSetBy } from '../simulated-gpus/simulated-gpus.filter';

export const VERIFIED_GPUS = 'verified-gpus';
export const VerifiedGpusReason = {
  /** A challenge of the GPU failed. */
  Unverified: 'Unverified',
  /** Not challenged yet. */
  VerificationPending: 'VerificationPending',
  /** Nothing reported the GPU's verification at all. */
  VerificationUnknown: 'VerificationUnknown',
} as const;

/**
 * Where the request requires verified GPUs, a GPU that is not simulated is placed only when its
 * last challenge passed (`verified`). Simulated GPUs pass here: `simulated-gpus` alone governs them.
 * Not now rather than never: a challenge can pass later (the job waits for it).
 */
export const verifiedGpusFilter: FilterPlugin = {
  name: VERIFIED_GPUS,
  gpuFilter: ({ request }) => {
    const { trust } = request;
    if (trust.verifiedGpus === 'optional') return null;
    const by = trustSetBy(trust);
    const pending = unschedulable(
      VERIFIED_GPUS,
      VerifiedGpusReason.VerificationPending,
      `pending: not challenged yet; verified GPUs required${by}`,
    );
    const unknown = unschedulable(
      VERIFIED_GPUS,
      VerifiedGpusReason.VerificationUnknown,
      `no verification reported; verified GPUs required${by}`,
    );
    // One status per distinct note (the challenge that failed), not one per GPU.
    const unverified = new Map<string, Status>();
    const unverifiedBecause = (note: string | null): Status => {
      const key = note ?? '';
      let st = unverified.get(key);
      if (st === undefined) {
        st = unschedulable(
          VERIFIED_GPUS,
          VerifiedGpusReason.Unverified,
          `unverified${note === null ? '' : `: ${note}`}; verified GPUs required${by}`,
        );
        unverified.set(key, st);
      }
      return st;
    };
    return (gpu) => {
      if (gpu.simulated) return SUCCESS;
      const v: GpuVerification | null = gpu.verification;
      switch (v) {
        case 'verified':
          return SUCCESS;
        case 'pending':
          return pending;
        case 'unverified':
          return unverifiedBecause(gpu.verificationNote);
        case 'simulated': // compiled as simulated above
          return SUCCESS;
        case null:
          return unknown;
        default: {
          const never: never = v;
          return never;
        }
      }
    };
  },
  describe: ({ request }) => (request.trust.verifiedGpus === 'required' ? 'verified' : null),
  // Its reasons say which challenge failed, so a waiting job's sentence quotes one.
  namesFigures: true,
};
