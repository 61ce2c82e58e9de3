import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { DOC_FILE, findRepoRoot, renderDoc, renderSchemaFile, SCHEMA_FILE } from './docs';

/** Rewrites docs/ensemble-spec.schema.json and the generated blocks of docs/ensemble-spec.md. */
const main = async (): Promise<void> => {
  const root = findRepoRoot(process.cwd());
  writeFileSync(join(root, SCHEMA_FILE), renderSchemaFile());
  const docPath = join(root, DOC_FILE);
  const options = (await resolveConfig(docPath)) ?? {};
  const doc = await format(renderDoc(readFileSync(docPath, 'utf8'), root), { ...options, filepath: docPath });
  writeFileSync(docPath, doc);
  process.stdout.write(`wrote ${SCHEMA_FILE} and ${DOC_FILE}\n`);
};

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 1;
});
