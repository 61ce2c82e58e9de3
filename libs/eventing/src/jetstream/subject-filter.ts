/**
 * Whether a subject matches any of the filters, with NATS semantics: `*` is exactly one token, `>`
 * one or more trailing tokens. Used where the server cannot filter on several subjects (NATS < 2.10).
 */
export const subjectMatcher = (filters: readonly string[]): ((subject: string) => boolean) => {
  const compiled = filters.map((filter) => filter.split('.'));
  return (subject) => {
    const tokens = subject.split('.');
    return compiled.some((f) => {
      for (let i = 0; i < f.length; i++) {
        if (f[i] === '>') return tokens.length > i;
        if (i >= tokens.length || (f[i] !== '*' && f[i] !== tokens[i])) return false;
      }
      return tokens.length === f.length;
    });
  };
};
