import type { FilterPlugin } from '../../framework/plugin';
import type { TrustRequirement } from '../../model/request';
import { SUCCESS, unresolvable } from '../../model/status';

export const SIMULATED_GPUS = 'simulated-gpus';
export const SimulatedGpusReason = { SimulatedRefused: 'SimulatedRefused' } as const;

/** `subnet 'demo'`, or nothing when the request set its own rules. */
export const trustSetBy = (trust: TrustRequirement): string =>
  trust.setBy === null ? '' : ` by ${trust.setBy}`;

/**
 * GPUs declared by a simulated edge serve only requests that allow them. Waiting does not help: a
 * simulated GPU stays simulated.
 */
export const simulatedGpusFilter: FilterPlugin = {
  name: SIMULATED_GPUS,
  gpuFilter: ({ request }) => {
    const { trust } = request;
    if (trust.simulatedGpus === 'allowed') return null;
    const refused = unresolvable(
      SIMULATED_GPUS,
      SimulatedGpusReason.SimulatedRefused,
      `simulated GPUs refused${trustSetBy(trust)}`,
    );
    return (gpu) => (gpu.simulated ? refused : SUCCESS);
  },
  describe: ({ request }) => (request.trust.simulatedGpus === 'refused' ? 'not simulated' : null),
  // Its reason is the rule itself, quoted so that a waiting job's sentence says why.
  namesFigures: true,
};
