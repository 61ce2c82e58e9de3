import { describe, expect, it } from 'vitest';
import { EncodedResponse } from '../src';

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe('EncodedResponse', () => {
  it('wraps JSON bytes in the ok reply', () => {
    const response = new EncodedResponse(new TextEncoder().encode('{"count":4}'));
    expect(JSON.parse(text(response.toReply()))).toEqual({ ok: true, data: { count: 4 } });
  });

  it('allocate: the handler writes the response inside the reply, which is sent without another copy', () => {
    const json = new TextEncoder().encode('{"name":"Zürich"}');
    const response = EncodedResponse.allocate(json.length);
    expect(response.json).toHaveLength(json.length);
    response.json.set(json);
    const reply = response.toReply();
    expect(text(reply)).toBe('{"ok":true,"data":{"name":"Zürich"}}');
    expect(reply.buffer).toBe(response.json.buffer);
    expect(response.toReply()).toBe(reply);
  });

  it('allocate into a buffer: the reply is written at its start when it fits, else in a new one', () => {
    const json = new TextEncoder().encode('{"count":4}');
    const into = new Uint8Array(64).fill(0xff);
    const response = EncodedResponse.allocate(json.length, into);
    response.json.set(json);
    const reply = response.toReply();
    expect(reply.buffer).toBe(into.buffer);
    expect(reply.byteOffset).toBe(0);
    expect(text(reply)).toBe('{"ok":true,"data":{"count":4}}');
    const small = new Uint8Array(8);
    expect(EncodedResponse.allocate(json.length, small).toReply().buffer).not.toBe(small.buffer);
  });
});
