import type { Logger } from '@gpunet/telemetry';
import type { LoggerService } from '@nestjs/common';

/**
 * Nest's own messages (module init, lifecycle errors) as JSON lines through the service's pino
 * logger, so every line a service writes has one format and carries trace ids.
 */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...context: unknown[]): void {
    this.write('info', message, context);
  }
  error(message: unknown, ...context: unknown[]): void {
    this.write('error', message, context);
  }
  warn(message: unknown, ...context: unknown[]): void {
    this.write('warn', message, context);
  }
  debug(message: unknown, ...context: unknown[]): void {
    this.write('debug', message, context);
  }
  verbose(message: unknown, ...context: unknown[]): void {
    this.write('trace', message, context);
  }
  fatal(message: unknown, ...context: unknown[]): void {
    this.write('fatal', message, context);
  }

  private write(
    level: 'info' | 'error' | 'warn' | 'debug' | 'trace' | 'fatal',
    message: unknown,
    context: unknown[],
  ): void {
    // Nest passes (message, [stack,] context): the last string is the context (a class name).
    const strings = context.filter((c): c is string => typeof c === 'string');
    const nestContext = strings.length > 0 ? strings[strings.length - 1] : undefined;
    const stack = strings.length > 1 ? strings[0] : undefined;
    const fields = { ...(nestContext ? { context: nestContext } : {}), ...(stack ? { stack } : {}) };
    if (message instanceof Error) this.logger[level]({ ...fields, err: message }, message.message);
    else if (typeof message === 'object' && message !== null) this.logger[level]({ ...fields, ...message });
    else this.logger[level](fields, String(message));
  }
}
