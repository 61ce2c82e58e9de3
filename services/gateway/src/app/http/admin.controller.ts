import { Controller, Delete, Get, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { NotFoundError } from '../../domain/gateway.errors';
import type { ApiKeyStore } from '../api-keys';
import { API_KEYS, IDEMPOTENCY } from '../gateway.tokens';
import { type IdempotencyStore, requestHash } from '../idempotency.store';
import * as S from './api.schemas';
import { idempotencyKeyOf, rawBodyOf, requireScope } from './request-context';
import { sendStored } from './reply';
import { parseInput, parseJsonBody } from './validate';

@Controller('v1/admin/api-keys')
export class AdminController {
  constructor(
    @Inject(API_KEYS) private readonly keys: ApiKeyStore,
    @Inject(IDEMPOTENCY) private readonly idempotency: IdempotencyStore,
  ) {}

  @Post()
  async create(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    const principal = requireScope(request, 'admin');
    const raw = rawBodyOf(request);
    const body = parseJsonBody(S.CreateApiKeyBody, raw, true);
    const hash = requestHash('POST', '/v1/admin/api-keys', 'application/json', raw);
    // The secret is never stored, not even for replays: a replay gets the key's record with `key: null`.
    const response = await this.idempotency.run(
      principal.tenantId,
      idempotencyKeyOf(request),
      hash,
      async (tx) => {
        const created = await this.keys.create(
          { tenantId: body.tenantId, scopes: body.scopes, name: body.name ?? null },
          tx,
        );
        if (body.defaultSubnet !== undefined)
          await this.keys.setDefaultSubnet(body.tenantId, body.defaultSubnet, tx);
        return { status: 201, body: { key: created.key, apiKey: created.record } };
      },
      (stored) => ({ ...(stored as object), key: null }),
    );
    return sendStored(reply, response);
  }

  @Get()
  async list(@Req() request: FastifyRequest): Promise<unknown> {
    requireScope(request, 'admin');
    const { tenant } = parseInput(S.ApiKeyListQuery, request.query, 'query');
    return { items: await this.keys.list(tenant) };
  }

  @Delete(':keyId')
  @HttpCode(204)
  async revoke(@Req() request: FastifyRequest): Promise<void> {
    requireScope(request, 'admin');
    const { keyId } = parseInput(S.ApiKeyIdParams, request.params, 'path');
    if (!(await this.keys.revoke(keyId))) throw new NotFoundError(`no API key ${keyId}`);
  }
}
