import { writeFileSync } from 'node:fs';
import { API_DOC_PATH, formattedApiMarkdown } from './api-doc';

/** Writes docs/api.md from the gateway's OpenAPI document. Run: npx tsx services/gateway/scripts/generate-api-doc.ts */
void formattedApiMarkdown().then((text) => {
  writeFileSync(API_DOC_PATH, text);
  process.stdout.write(`wrote ${API_DOC_PATH}\n`);
});
