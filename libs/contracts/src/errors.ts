/** A problem with one field of a message, named by its dotted path (`data.gpus.count`). */
export interface ValidationIssue {
  readonly path: string;
  readonly message: string;
}

/** Base class of every contract error; `code` is what callers branch on, never the message text. */
export abstract class ContractError extends Error {
  abstract readonly code: string;
}

/** A message (or a payload) does not match its registered schema. Never retryable. */
export class InvalidMessageError extends ContractError {
  readonly code = 'INVALID_MESSAGE' as const;
  override readonly name = 'InvalidMessageError';
  constructor(
    readonly messageType: string,
    readonly issues: readonly ValidationIssue[],
  ) {
    super(`invalid ${messageType}: ${issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`);
  }
}

/** A message names a type/version that the registry does not know. Never retryable. */
export class UnknownMessageTypeError extends ContractError {
  readonly code = 'UNKNOWN_MESSAGE_TYPE' as const;
  override readonly name = 'UnknownMessageTypeError';
  constructor(
    readonly messageType: string,
    readonly messageVersion: number | undefined,
  ) {
    super(`unknown message type ${messageType}${messageVersion === undefined ? '' : ` v${messageVersion}`}`);
  }
}

/** A registry was built with two definitions for the same type and version, or similar misuse. */
export class RegistryDefinitionError extends ContractError {
  readonly code = 'REGISTRY_DEFINITION' as const;
  override readonly name = 'RegistryDefinitionError';
}

/** A subject token (an edge id, say) would change the subject's shape: it holds `.`, `*`, `>` or spaces. */
export class InvalidSubjectTokenError extends ContractError {
  readonly code = 'INVALID_SUBJECT_TOKEN' as const;
  override readonly name = 'InvalidSubjectTokenError';
}

/** An edge report that must be signed arrived unsigned (an older version). Never retryable. */
export class UnsignedReportError extends ContractError {
  readonly code = 'UNSIGNED_REPORT' as const;
  readonly retryable = false;
  override readonly name = 'UnsignedReportError';
}

export const isContractError = (e: unknown): e is ContractError => e instanceof ContractError;
export const isInvalidMessage = (e: unknown): e is InvalidMessageError => e instanceof InvalidMessageError;
export const isUnknownMessageType = (e: unknown): e is UnknownMessageTypeError =>
  e instanceof UnknownMessageTypeError;
