import { createRegistry, defaultRegistry, GPU_MODEL, type PluginRegistry, TFLOPS } from '@gpunet/scheduling';
import { discoveryOfferFilter } from './discovery-offer.filter';
import { measuredTflopsFilter } from './measured-tflops.filter';
import { modelWordsFilter } from './model-words.filter';

/**
 * The core's default pipeline as the scheduler runs it: models matched by word sequence, TFLOPS
 * minimums only on measured GPUs (`measured-tflops` just before the core's `tflops`), and only the
 * GPUs discovery offered for each allocation.
 */
export const placementRegistry = (
  /** Allocation name → GPU uuids discovery offered for it. */
  offered: ReadonlyMap<string, ReadonlySet<string>>,
): PluginRegistry =>
  createRegistry({
    filters: [
      ...defaultRegistry.filters.flatMap((f) =>
        f.name === GPU_MODEL ? [modelWordsFilter] : f.name === TFLOPS ? [measuredTflopsFilter, f] : [f],
      ),
      discoveryOfferFilter(offered),
    ],
  });
