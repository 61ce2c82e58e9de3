import { type ArgumentsHost, Catch, type RpcExceptionFilter } from '@nestjs/common';
import { type Observable, throwError } from 'rxjs';

/**
 * Hands a handler's error to the transport as it was thrown. Nest's default RPC filter replaces
 * every error that is not an `RpcException` with `{ status: 'error', message: 'Internal server
 * error' }`, and the transport decides by the error's type whether a message is retried or
 * dead-lettered at once (`PermanentHandlerError`, a contract violation) and which code a query
 * answers with: the one place errors are mapped is the transport, not a filter.
 */
@Catch()
export class RethrowRpcFilter implements RpcExceptionFilter<unknown> {
  catch(exception: unknown, _host: ArgumentsHost): Observable<never> {
    return throwError(() => exception);
  }
}
