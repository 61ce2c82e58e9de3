import {
  AccountStatementQuery,
  JobStatementQuery,
  type QueryDefinition,
  type QueryResponse,
  SettlementBalancesQuery,
  SubnetEconomicsQuery,
} from '@gpunet/contracts';
import { served } from '@gpunet/eventing';
import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import type { z } from 'zod';
import { SettlementReader } from '../infra/settlement-reader';

/** A request as the handler gets it: validated, its defaults filled in. */
export type RequestOf<Q extends QueryDefinition> = z.output<Q['request']>;

/** Replicas of settlement share its queries. */
export const QUERY_SERVING = served({ queue: 'settlement' });

/** Settlement's queries: balances, statements and subnet economics, from the ledger and the event store. */
@Controller()
export class SettlementQueriesHandler {
  constructor(@Inject(SettlementReader) private readonly reader: SettlementReader) {}

  @MessagePattern(SettlementBalancesQuery, QUERY_SERVING)
  balances(
    @Payload() request: RequestOf<typeof SettlementBalancesQuery>,
  ): Promise<QueryResponse<typeof SettlementBalancesQuery>> {
    return this.reader.balances(request);
  }

  @MessagePattern(AccountStatementQuery, QUERY_SERVING)
  accountStatement(
    @Payload() request: RequestOf<typeof AccountStatementQuery>,
  ): Promise<QueryResponse<typeof AccountStatementQuery>> {
    return this.reader.accountStatement(request);
  }

  @MessagePattern(JobStatementQuery, QUERY_SERVING)
  jobStatement(
    @Payload() request: RequestOf<typeof JobStatementQuery>,
  ): Promise<QueryResponse<typeof JobStatementQuery>> {
    return this.reader.jobStatement(request.jobId);
  }

  @MessagePattern(SubnetEconomicsQuery, QUERY_SERVING)
  subnetEconomics(
    @Payload() request: RequestOf<typeof SubnetEconomicsQuery>,
  ): Promise<QueryResponse<typeof SubnetEconomicsQuery>> {
    return this.reader.subnetEconomics(request.subnetId);
  }
}
