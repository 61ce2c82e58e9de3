/** A lean JSON-lines logger (the edge runs on other people's machines: no logging framework). */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type EdgeLogger = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => void;

const SECRET = /seed|secret|password|token|private/i;

const scrub = (fields: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, SECRET.test(k) ? '[REDACTED]' : v]));

export const jsonLogger =
  (
    write: (line: string) => void,
    base: Record<string, unknown> = {},
    minLevel: LogLevel = 'info',
  ): EdgeLogger =>
  (level, msg, fields = {}) => {
    const order = { debug: 10, info: 20, warn: 30, error: 40 };
    if (order[level] < order[minLevel]) return;
    write(
      `${JSON.stringify({ time: new Date().toISOString(), level, service: 'provider-edge', ...base, msg, ...scrub(fields) })}\n`,
    );
  };

export const silentLogger: EdgeLogger = () => undefined;
