import { resolve } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { renderApiMarkdown } from '../src/app/http/api-markdown';
import { buildOpenApiDocument } from '../src/app/http/openapi';

/** The command that regenerates both documents; the staleness tests name it. */
export const API_DOCUMENT_COMMAND = 'npm run api:document';

/** Where the generated reference lives. */
export const API_DOC_PATH = resolve(import.meta.dirname, '../../../docs/api.md');

/** Where the OpenAPI document is published for client generators (the one `/docs/openapi.json` serves). */
export const OPENAPI_PATH = resolve(import.meta.dirname, '../../../docs/openapi.json');

/** docs/api.md as generated and formatted by the repository's Prettier settings. */
export const formattedApiMarkdown = async (): Promise<string> =>
  format(renderApiMarkdown(), { ...(await resolveConfig(API_DOC_PATH)), parser: 'markdown' });

/** docs/openapi.json: the served document, formatted as `prettier --check` wants it (newline at the end). */
export const formattedOpenApiJson = async (): Promise<string> =>
  format(JSON.stringify(buildOpenApiDocument()), { ...(await resolveConfig(OPENAPI_PATH)), parser: 'json' });
