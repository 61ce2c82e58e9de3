import { writeFileSync } from 'node:fs';
import { API_DOC_PATH, formattedApiMarkdown, formattedOpenApiJson, OPENAPI_PATH } from './api-doc';

/** Writes docs/api.md and docs/openapi.json from the gateway's OpenAPI document. Run: npm run api:document */
void Promise.all([formattedApiMarkdown(), formattedOpenApiJson()]).then(([markdown, json]) => {
  writeFileSync(API_DOC_PATH, markdown);
  writeFileSync(OPENAPI_PATH, json);
  process.stdout.write(`wrote ${API_DOC_PATH}\nwrote ${OPENAPI_PATH}\n`);
});
