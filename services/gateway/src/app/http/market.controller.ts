import { Controller, Delete, Get, Inject, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { MARKET_SERVICE } from '../gateway.tokens';
import type { MarketService } from '../market.service';
import * as S from './api.schemas';
import { idempotencyKeyOf, rawBodyOf, requireScope } from './request-context';
import { sendStored } from './reply';
import { parseInput, parseJsonBody, requireNoBody } from './validate';

@Controller('v1')
export class MarketController {
  constructor(@Inject(MARKET_SERVICE) private readonly market: MarketService) {}

  @Get('providers')
  providers(@Req() request: FastifyRequest): Promise<unknown> {
    requireScope(request, 'read');
    return this.market.providers(parseInput(S.ProvidersQuery, request.query, 'query'));
  }

  @Get('providers/:providerId')
  provider(@Req() request: FastifyRequest): Promise<unknown> {
    requireScope(request, 'read');
    const { providerId } = parseInput(S.ProviderIdParams, request.params, 'path');
    return this.market.provider(providerId);
  }

  @Post('subnets')
  async createSubnet(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    const principal = requireScope(request, 'submit');
    const raw = rawBodyOf(request);
    const body = parseJsonBody(S.CreateSubnetBody, raw, true);
    return sendStored(reply, await this.market.createSubnet(principal, body, raw, idempotencyKeyOf(request)));
  }

  @Get('subnets/:subnetId')
  subnet(@Req() request: FastifyRequest): Promise<unknown> {
    const principal = requireScope(request, 'read');
    const { subnetId } = parseInput(S.SubnetIdParams, request.params, 'path');
    return this.market.subnet(principal, subnetId);
  }

  @Post('subnets/:subnetId/join')
  async join(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    const principal = requireScope(request, 'submit');
    const { subnetId } = parseInput(S.SubnetIdParams, request.params, 'path');
    const raw = rawBodyOf(request);
    const body = parseJsonBody(S.JoinSubnetBody, raw, true);
    return sendStored(
      reply,
      await this.market.joinSubnet(principal, subnetId, body, raw, idempotencyKeyOf(request)),
    );
  }

  @Post('subnets/:subnetId/parameters')
  async updateParameters(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    const principal = requireScope(request, 'submit');
    const { subnetId } = parseInput(S.SubnetIdParams, request.params, 'path');
    const raw = rawBodyOf(request);
    const body = parseJsonBody(S.UpdateSubnetParametersBody, raw, true);
    return sendStored(
      reply,
      await this.market.updateSubnetParameters(principal, subnetId, body, raw, idempotencyKeyOf(request)),
    );
  }

  @Post('subnets/:subnetId/leave')
  async leave(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    const principal = requireScope(request, 'submit');
    const { subnetId } = parseInput(S.SubnetIdParams, request.params, 'path');
    requireNoBody(rawBodyOf(request));
    return sendStored(reply, await this.market.leaveSubnet(principal, subnetId, idempotencyKeyOf(request)));
  }

  @Post('subnets/:subnetId/proposals')
  async propose(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    const principal = requireScope(request, 'submit');
    const { subnetId } = parseInput(S.SubnetIdParams, request.params, 'path');
    const raw = rawBodyOf(request);
    const body = parseJsonBody(S.CreateProposalBody, raw, true);
    return sendStored(
      reply,
      await this.market.propose(principal, subnetId, body, raw, idempotencyKeyOf(request)),
    );
  }

  @Get('subnets/:subnetId/proposals')
  proposals(@Req() request: FastifyRequest): Promise<unknown> {
    const principal = requireScope(request, 'read');
    const { subnetId } = parseInput(S.SubnetIdParams, request.params, 'path');
    return this.market.proposals(principal, subnetId);
  }

  @Get('subnets/:subnetId/proposals/:proposalId')
  proposal(@Req() request: FastifyRequest): Promise<unknown> {
    const principal = requireScope(request, 'read');
    const { subnetId, proposalId } = parseInput(S.ProposalIdParams, request.params, 'path');
    return this.market.proposalOf(principal, subnetId, proposalId);
  }

  @Post('subnets/:subnetId/proposals/:proposalId/votes')
  async vote(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    const principal = requireScope(request, 'submit');
    const { subnetId, proposalId } = parseInput(S.ProposalIdParams, request.params, 'path');
    const raw = rawBodyOf(request);
    const body = parseJsonBody(S.VoteBody, raw, true);
    return sendStored(
      reply,
      await this.market.vote(principal, subnetId, proposalId, body, raw, idempotencyKeyOf(request)),
    );
  }

  @Post('subnets/:subnetId/delegations')
  async delegate(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    const principal = requireScope(request, 'submit');
    const { subnetId } = parseInput(S.SubnetIdParams, request.params, 'path');
    const raw = rawBodyOf(request);
    const body = parseJsonBody(S.DelegateBody, raw, true);
    return sendStored(
      reply,
      await this.market.delegate(principal, subnetId, body, raw, idempotencyKeyOf(request)),
    );
  }

  @Delete('subnets/:subnetId/delegations/:providerId')
  async undelegate(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    const principal = requireScope(request, 'submit');
    const { subnetId, providerId } = parseInput(S.DelegationParams, request.params, 'path');
    requireNoBody(rawBodyOf(request));
    return sendStored(
      reply,
      await this.market.undelegate(principal, subnetId, providerId, idempotencyKeyOf(request)),
    );
  }

  @Post('subnets/:subnetId/slashes/:slashId/appeal')
  async appeal(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    const principal = requireScope(request, 'submit');
    const { subnetId, slashId } = parseInput(S.SlashIdParams, request.params, 'path');
    const raw = rawBodyOf(request);
    const body = parseJsonBody(S.AppealBody, raw, false);
    return sendStored(
      reply,
      await this.market.appeal(principal, subnetId, slashId, body, raw, idempotencyKeyOf(request)),
    );
  }

  @Get('subnets/:subnetId/statement')
  stakeStatement(@Req() request: FastifyRequest): Promise<unknown> {
    const principal = requireScope(request, 'read');
    const { subnetId } = parseInput(S.SubnetIdParams, request.params, 'path');
    return this.market.stakeStatement(
      principal,
      subnetId,
      parseInput(S.SubnetStatementQuery, request.query, 'query'),
    );
  }

  @Get('accounts/balances')
  balances(@Req() request: FastifyRequest): Promise<unknown> {
    const principal = requireScope(request, 'read');
    const { asset } = parseInput(S.BalancesQuery, request.query, 'query');
    return this.market.balances(principal, asset);
  }

  @Get('accounts/statement')
  statement(@Req() request: FastifyRequest): Promise<unknown> {
    const principal = requireScope(request, 'read');
    return this.market.statement(principal, parseInput(S.StatementQuery, request.query, 'query'));
  }

  @Post('accounts/deposits')
  async deposit(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    const principal = requireScope(request, 'submit');
    const raw = rawBodyOf(request);
    const body = parseJsonBody(S.DepositBody, raw, true);
    return sendStored(reply, await this.market.deposit(principal, body, raw, idempotencyKeyOf(request)));
  }

  @Post('accounts/withdrawals')
  async withdraw(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    const principal = requireScope(request, 'submit');
    const raw = rawBodyOf(request);
    const body = parseJsonBody(S.WithdrawalBody, raw, true);
    return sendStored(reply, await this.market.withdraw(principal, body, raw, idempotencyKeyOf(request)));
  }
}
