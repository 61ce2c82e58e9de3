import type { CommandGroup } from '../../command';
import { explainCommand } from './explain.command';
import { normalizeCommand } from './normalize.command';
import { schemaCommand } from './schema.command';
import { validateCommand } from './validate.command';

export const specCommands: CommandGroup = {
  name: 'spec',
  summary: 'validate, explain and normalize ensemble specs',
  commands: [validateCommand, explainCommand, normalizeCommand, schemaCommand],
};
