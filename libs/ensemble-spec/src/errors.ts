/**
 * What is wrong with a spec. Callers branch on `code`, never on `message`; `message` is for people
 * and says what to do.
 */
export const SPEC_ERROR_CODE_DOCS = {
  SYNTAX: 'The source is not well-formed YAML/JSON (or a map has a key twice).',
  DOCUMENT_TOO_LARGE: 'The document is larger than `limits.maxBytes`.',
  TOO_DEEP: 'Maps and lists nest deeper than `limits.maxDepth`.',
  ALIAS_LIMIT: 'YAML aliases expand past `limits.maxAliasCount` (an alias bomb).',
  MULTIPLE_DOCUMENTS: 'More than one YAML document in one file.',
  UNSUPPORTED_VERSION: '`apiVersion` or `kind` is not one this library reads.',
  UNKNOWN_FIELD: 'A field this version of the format does not have — often a typo; the message suggests one.',
  MISSING_FIELD: 'A required field is absent.',
  INVALID_TYPE: 'The value has the wrong type (a list where a map belongs, a number where text belongs).',
  INVALID_VALUE: 'The value has the right type but is not allowed (enum member, name, unit, version range).',
  OUT_OF_RANGE: 'A number is outside its allowed range.',
  LIMIT_EXCEEDED: 'A configured limit (GPUs per job, allocations, list length) is exceeded.',
  UNKNOWN_REFERENCE: 'A name refers to an allocation or node that does not exist.',
  DUPLICATE: 'Two things that must be unique are not.',
  CONFLICT: 'Two fields contradict each other.',
  UNSATISFIABLE: 'Every field is valid, but no placement could ever satisfy them together.',
  NOT_SUPPORTED:
    'A field of the format that gpunet does not honour yet: refused, with what happens instead, rather than accepted and ignored.',
  TOO_MANY_ERRORS: 'More errors than `limits.maxErrors`; the rest were not reported.',
  INTERNAL: 'A bug in the parser; the input may well be fine. Reported, never thrown.',
} as const;

export type SpecErrorCode = keyof typeof SPEC_ERROR_CODE_DOCS;

/** Every code a `SpecError` can carry; callers branch on these, never on message text. */
export const SPEC_ERROR_CODES = Object.keys(SPEC_ERROR_CODE_DOCS) as SpecErrorCode[];

export interface SpecError {
  /** Dotted path of the field (`allocations.trainer.resources.gpus.count`); `''` for the document. */
  readonly path: string;
  /** 1-based line in the source, where the field (or its nearest present parent) is. */
  readonly line?: number;
  /** 1-based column in the source. */
  readonly column?: number;
  readonly message: string;
  readonly code: SpecErrorCode;
}

/** Something allowed but probably not meant (an ignored field, a cap below the cost ceiling). */
export interface SpecWarning {
  readonly path: string;
  readonly line?: number;
  readonly column?: number;
  readonly message: string;
}

/** `path:line:column: message [CODE]`, the form the CLI prints. */
export const formatSpecError = (e: SpecWarning & { readonly code?: string }, filename?: string): string => {
  const where = [filename, e.line, e.column].filter((p) => p !== undefined).join(':');
  const code = e.code === undefined ? '' : ` [${e.code}]`;
  const path = e.path === '' ? '' : `${e.path}: `;
  return `${where === '' ? '' : `${where}: `}${path}${e.message}${code}`;
};

/** Thrown only by `parseEnsembleSpecOrThrow`; `parseEnsembleSpec` never throws. */
export class EnsembleSpecError extends Error {
  readonly code = 'INVALID_ENSEMBLE_SPEC' as const;
  override readonly name = 'EnsembleSpecError';
  constructor(readonly errors: readonly SpecError[]) {
    super(`invalid ensemble spec: ${errors.map((e) => formatSpecError(e)).join('; ')}`);
  }
}

export const isEnsembleSpecError = (e: unknown): e is EnsembleSpecError => e instanceof EnsembleSpecError;
