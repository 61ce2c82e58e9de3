import { parseEnsembleSpec, type ParseResult } from '@gpunet/ensemble-spec';
import type { CliIo } from '../../io';

const SPEC_EXTENSIONS = /\.(ya?ml|json)$/i;

/** One file's outcome: parsed, or not readable at all. */
export type FileOutcome =
  | { readonly file: string; readonly result: ParseResult }
  | { readonly file: string; readonly readError: string };

const join = (dir: string, name: string): string => (dir.endsWith('/') ? `${dir}${name}` : `${dir}/${name}`);

/**
 * The spec files named on the command line. A directory stands for the `.yaml`/`.yml`/`.json`
 * files below it (so `gpunet spec validate docs/examples/*` skips the scripts in `jobs/`); a file
 * named explicitly is always read, whatever its extension.
 */
export const expandSpecPaths = async (paths: readonly string[], io: CliIo): Promise<string[]> => {
  const files: string[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    if (depth > 8) return;
    for (const name of (await io.list(dir)).sort()) {
      const path = join(dir, name);
      const kind = await io.kind(path);
      if (kind === 'directory') await walk(path, depth + 1);
      else if (kind === 'file' && SPEC_EXTENSIONS.test(name)) files.push(path);
    }
  };
  for (const p of paths) {
    if ((await io.kind(p)) === 'directory') await walk(p, 0);
    else files.push(p);
  }
  return files;
};

export const checkSpecFile = async (file: string, io: CliIo): Promise<FileOutcome> => {
  let source: string;
  try {
    source = await io.readFile(file);
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    return {
      file,
      readError: code === 'ENOENT' ? 'no such file' : e instanceof Error ? e.message : String(e),
    };
  }
  return { file, result: parseEnsembleSpec(source, { filename: file }) };
};
