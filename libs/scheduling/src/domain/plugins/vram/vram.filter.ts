import type { FilterPlugin } from '../../framework/plugin';
import { SUCCESS, unresolvable } from '../../model/status';

export const VRAM = 'vram';
export const VramReason = { InsufficientVram: 'InsufficientVram' } as const;

/** Bytes in words: `40 GB`, `80 GiB` when exact in binary units. */
export const formatBytes = (b: number): string => {
  const gib = b / 2 ** 30;
  if (Number.isInteger(gib)) return `${gib} GiB`;
  const gb = b / 1e9;
  return `${Number.isInteger(gb) ? gb : gb.toFixed(1)} GB`;
};

export const vramFilter: FilterPlugin = {
  name: VRAM,
  gpuFilter: ({ request }) => {
    const min = request.minVramBytes;
    if (min <= 0) return null;
    const small = unresolvable(VRAM, VramReason.InsufficientVram, `GPU has less than ${formatBytes(min)}`);
    return (gpu) => (gpu.vramBytes >= min ? SUCCESS : small);
  },
  describe: ({ request }) => (request.minVramBytes > 0 ? `≥ ${formatBytes(request.minVramBytes)}` : null),
};
