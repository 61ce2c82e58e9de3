import { ExitCode } from '../command';
import { CliError, type Problem, type ProblemIssue } from './errors';

/** The exit code for an HTTP error status: auth 3, not found 4, anything else the gateway refused 1. */
export const exitCodeForStatus = (status: number): ExitCode =>
  status === 401 || status === 403 ? ExitCode.Auth : status === 404 ? ExitCode.NotFound : ExitCode.Failed;

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const int = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isInteger(v) ? v : undefined;

/**
 * The problem document of an error response, whatever the body was: a problem+json body is read
 * defensively (fields of the wrong type are dropped), anything else becomes a problem with the
 * status and the start of the text.
 */
export const toProblem = (status: number, body: string): Problem => {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    json = undefined;
  }
  if (!isRecord(json)) {
    const text = body.trim().replace(/\s+/g, ' ').slice(0, 200);
    return { status, ...(text ? { detail: text } : {}) };
  }
  const errors: ProblemIssue[] = [];
  if (Array.isArray(json['errors']))
    for (const e of json['errors'].slice(0, 200)) {
      if (!isRecord(e)) continue;
      const path = str(e['path']) ?? '';
      const message = str(e['message']) ?? '';
      const code = str(e['code']);
      const line = int(e['line']);
      const column = int(e['column']);
      errors.push({
        path,
        message,
        ...(code !== undefined ? { code } : {}),
        ...(line !== undefined ? { line } : {}),
        ...(column !== undefined ? { column } : {}),
      });
    }
  const pick = (k: string) => (str(json[k]) !== undefined ? { [k]: str(json[k]) } : {});
  return {
    status: int(json['status']) ?? status,
    ...pick('type'),
    ...pick('title'),
    ...pick('detail'),
    ...pick('instance'),
    ...pick('code'),
    ...(errors.length > 0 ? { errors } : {}),
  };
};

const HINTS: Readonly<Record<number, string>> = {
  401: 'the API key is missing, wrong or revoked; run `gpunet login` with a valid key',
  403: 'the API key lacks the scope this needs',
  429: 'rate limited; retry in a moment',
};

/**
 * For people: `gpunet: <title>: <detail> (HTTP 400 INVALID_SPEC)` and then one line per field at
 * fault, `file:line:column: path: message [CODE]` when the gateway located it in `file`.
 */
export const renderProblem = (p: Problem, file?: string): string => {
  // With fields at fault the detail only summarizes them (they follow, one per line): the title says enough.
  const fields = (p.errors?.length ?? 0) > 0;
  const head = [p.title, fields && p.title ? undefined : p.detail].filter(
    (s): s is string => !!s && s.length > 0,
  );
  // The title often repeats the detail's start; keep both only when they differ.
  const text = head.length === 2 && head[1]!.startsWith(head[0]!) ? head[1]! : head.join(': ');
  const lines = [
    `gpunet: ${text || 'the gateway refused the request'} (HTTP ${p.status}${p.code ? ` ${p.code}` : ''})`,
  ];
  for (const e of p.errors ?? []) {
    const where =
      e.line !== undefined
        ? `${file ?? 'spec'}:${e.line}${e.column !== undefined ? `:${e.column}` : ''}: `
        : '';
    lines.push(`  ${where}${e.path || '(root)'}: ${e.message}${e.code ? ` [${e.code}]` : ''}`);
  }
  const hint = HINTS[p.status];
  if (hint && !(p.errors && p.errors.length > 0)) lines.push(`  hint: ${hint}`);
  return `${lines.join('\n')}\n`;
};

/** The error a command exits with for an HTTP error response. */
export const problemError = (p: Problem, file?: string): CliError =>
  new CliError(exitCodeForStatus(p.status), renderProblem(p, file), p);
