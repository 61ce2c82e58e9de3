import { InvalidSubjectTokenError } from './errors';

/** Names the `{token}`s of a subject template: `cmd.edge.{edgeId}.start-rank.v1` → `'edgeId'`. */
export type SubjectTokens<S extends string> = S extends `${string}{${infer Token}}${infer Rest}`
  ? Token | SubjectTokens<Rest>
  : never;

/** The values a subject template needs, or `void` when it has no tokens. */
export type SubjectParams<S extends string> = [SubjectTokens<S>] extends [never]
  ? void
  : { readonly [K in SubjectTokens<S>]: string };

// A token fills exactly one subject level; NATS wildcards and separators would widen or split it.
const VALID_TOKEN = /^[A-Za-z0-9_-]{1,128}$/;

export const assertSubjectToken = (name: string, value: string): void => {
  if (!VALID_TOKEN.test(value)) {
    throw new InvalidSubjectTokenError(
      `subject token ${name}=${JSON.stringify(value)} must be 1-128 characters of A-Z a-z 0-9 _ -`,
    );
  }
};

/** Fills a subject template; each value is checked so that it cannot change the subject's shape. */
export const renderSubject = (template: string, params: Readonly<Record<string, string>> | void): string =>
  template.replace(/\{([A-Za-z][A-Za-z0-9]*)\}/g, (_, token: string) => {
    const value = params?.[token];
    if (value === undefined) throw new InvalidSubjectTokenError(`subject token ${token} is missing`);
    assertSubjectToken(token, value);
    return value;
  });

/** The subject template with every token as `*`: what a consumer filters on to receive all of them. */
export const wildcardSubject = (template: string): string =>
  template.replace(/\{[A-Za-z][A-Za-z0-9]*\}/g, '*');

/** Puts the namespace prefix (tests: a unique one per suite; production: empty) before a subject. */
export const prefixSubject = (prefix: string, subject: string): string =>
  prefix === '' ? subject : `${prefix}.${subject}`;
