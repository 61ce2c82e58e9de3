import { resolve } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { renderApiMarkdown } from '../src/app/http/api-markdown';

/** Where the generated reference lives. */
export const API_DOC_PATH = resolve(import.meta.dirname, '../../../docs/api.md');

/** docs/api.md as generated and formatted by the repository's Prettier settings. */
export const formattedApiMarkdown = async (): Promise<string> =>
  format(renderApiMarkdown(), { ...(await resolveConfig(API_DOC_PATH)), parser: 'markdown' });
