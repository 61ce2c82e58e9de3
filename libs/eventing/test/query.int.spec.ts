import { defineQuery, InvalidMessageError } from '@gpunet/contracts';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  askQuery,
  EncodedResponse,
  NoRespondersError,
  PermanentHandlerError,
  QueryFailedError,
  QueryTimeoutError,
  serveQuery,
} from '../src';
import { NATS_URL, uniqueName } from './support';

const GpuCount = defineQuery({
  name: 'test.gpu-count',
  version: 1,
  description: 'how many GPUs of a vendor',
  request: z.strictObject({ vendor: z.enum(['nvidia', 'amd']), minVramGb: z.int().min(0).default(0) }),
  response: z.strictObject({ count: z.int().min(0) }),
});
const Silent = defineQuery({
  name: 'test.silent',
  version: 1,
  description: 'never answers in time',
  request: z.strictObject({}),
  response: z.strictObject({}),
});

/** A handler answering with these JSON bytes, written into the reply as `EncodedResponse.allocate` offers. */
const encoded = (json: string) => async () => {
  const bytes = new TextEncoder().encode(json);
  const response = EncodedResponse.allocate(bytes.length);
  response.json.set(bytes);
  return response;
};

const prefix = uniqueName('query');
let nc: NatsConnection;

beforeAll(async () => {
  nc = await connect({ servers: NATS_URL });
});
afterAll(async () => {
  await nc.close();
});

describe('request/reply queries over core NATS', () => {
  it('answers a valid request with a validated response', async () => {
    const sub = serveQuery(
      GpuCount,
      async ({ vendor, minVramGb }) => ({ count: vendor === 'nvidia' ? 8 - minVramGb / 10 : 2 }),
      { nc, prefix },
    );
    try {
      await expect(askQuery(nc, GpuCount, { vendor: 'nvidia', minVramGb: 40 }, { prefix })).resolves.toEqual({
        count: 4,
      });
      await expect(askQuery(nc, GpuCount, { vendor: 'amd' }, { prefix })).resolves.toEqual({ count: 2 });
    } finally {
      sub.unsubscribe();
    }
  });

  it('a bad request is refused by the client before sending, naming the field', async () => {
    const error = await askQuery(nc, GpuCount, { vendor: 'intel' as never }, { prefix }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidMessageError);
    expect((error as InvalidMessageError).issues[0]?.path).toBe('vendor');
  });

  it('a bad request that reaches the server gets INVALID_REQUEST with paths, and the server keeps serving', async () => {
    const sub = serveQuery(GpuCount, async () => ({ count: 1 }), { nc, prefix });
    try {
      const reply = await nc.request(GpuCount.subject(prefix), JSON.stringify({ vendor: 7, extra: true }), {
        timeout: 2000,
      });
      const body = reply.json<{ ok: boolean; error: { code: string; issues: { path: string }[] } }>();
      expect(body.ok).toBe(false);
      expect(body.error.code).toBe('INVALID_REQUEST');
      expect(body.error.issues.map((i) => i.path).sort()).toEqual(['', 'vendor']);
      const garbage = await nc.request(GpuCount.subject(prefix), 'not json', { timeout: 2000 });
      expect(garbage.json<{ error: { code: string } }>().error.code).toBe('INVALID_REQUEST');
      await expect(askQuery(nc, GpuCount, { vendor: 'amd' }, { prefix })).resolves.toEqual({ count: 1 });
    } finally {
      sub.unsubscribe();
    }
  });

  it('a handler failure comes back as QueryFailedError with its code and retryability', async () => {
    const sub = serveQuery(
      GpuCount,
      async () => {
        throw new PermanentHandlerError('NO_SUCH_SUBNET', 'subnet ai does not exist');
      },
      { nc, prefix },
    );
    try {
      const error = await askQuery(nc, GpuCount, { vendor: 'amd' }, { prefix }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(QueryFailedError);
      expect(error).toMatchObject({
        remoteCode: 'NO_SUCH_SUBNET',
        retryable: false,
        message: 'subnet ai does not exist',
      });
    } finally {
      sub.unsubscribe();
    }
  });

  it('a handler may answer with encoded JSON, sent as it is', async () => {
    const sub = serveQuery(GpuCount, encoded('{"count":3}'), { nc, prefix });
    try {
      await expect(askQuery(nc, GpuCount, { vendor: 'amd' }, { prefix })).resolves.toEqual({ count: 3 });
    } finally {
      sub.unsubscribe();
    }
  });

  it.each([
    ['an object', async () => ({ count: -1 })],
    ['encoded JSON', encoded('{"count":-1}')],
  ])(
    'an off-contract response (%s): the server refuses to send it by default; without that check the asker still refuses it',
    async (_kind, offContract) => {
      const checked = serveQuery(GpuCount, offContract, { nc, prefix, queue: uniqueName('checked') });
      try {
        const error = await askQuery(nc, GpuCount, { vendor: 'amd' }, { prefix }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(QueryFailedError);
        expect((error as QueryFailedError).message).toMatch(/count/);
      } finally {
        checked.unsubscribe();
      }
      const unchecked = serveQuery(GpuCount, offContract, { nc, prefix, validateResponses: false });
      try {
        const error = await askQuery(nc, GpuCount, { vendor: 'amd' }, { prefix }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(InvalidMessageError);
        expect((error as InvalidMessageError).issues).toEqual([
          expect.objectContaining({ path: 'data.count' }),
        ]);
      } finally {
        unchecked.unsubscribe();
      }
    },
  );

  it('nobody serving → NoRespondersError; a slow server → QueryTimeoutError', async () => {
    await expect(
      askQuery(nc, GpuCount, { vendor: 'amd' }, { prefix: uniqueName('none') }),
    ).rejects.toBeInstanceOf(NoRespondersError);
    let release: () => void = () => undefined;
    const sub = serveQuery(Silent, () => new Promise((resolve) => (release = () => resolve({}))), {
      nc,
      prefix,
    });
    try {
      await expect(askQuery(nc, Silent, {}, { prefix, timeoutMs: 50 })).rejects.toBeInstanceOf(
        QueryTimeoutError,
      );
    } finally {
      release();
      sub.unsubscribe();
    }
  });
});
