import type { GangFilterPlugin } from '../../framework/plugin';
import { pluginError, SUCCESS } from '../../model/status';

export const MIXED_MODELS = 'mixed-models';
export const MixedModelsReason = { ModelsMixed: 'ModelsMixed' } as const;

/** Unless the job allows mixing, every GPU of the gang is the same model. */
export const mixedModelsGangFilter: GangFilterPlugin = {
  name: MIXED_MODELS,
  filterGang: ({ request }, gang) => {
    if (request.mixedModels) return SUCCESS;
    const models = new Set(gang.nodes.flatMap((n) => n.gpus.map((g) => g.model)));
    return models.size <= 1
      ? SUCCESS
      : pluginError(MIXED_MODELS, MixedModelsReason.ModelsMixed, `gang mixes ${[...models].join(', ')}`);
  },
};
