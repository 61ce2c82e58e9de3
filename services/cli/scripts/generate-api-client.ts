import { writeFileSync } from 'node:fs';
import { generatedApiClient } from './api-client';

/** Writes the CLI's types and schemas of the gateway's API from docs/openapi.json. Run: npm run api:client */
void generatedApiClient().then((files) => {
  for (const [path, text] of Object.entries(files)) {
    writeFileSync(path, text);
    process.stdout.write(`wrote ${path}\n`);
  }
});
