import { describe, expect, it } from 'vitest';
import {
  decodeStun,
  discoKey,
  encodeBindingRequest,
  encodeBindingSuccess,
  encodeFrame,
  encodePacketFrame,
  FrameDecoder,
  FrameTooLargeError,
  FrameType,
  generateKeyPair,
  isDisco,
  keyBytes,
  openDisco,
  publicKeyOf,
  sealDisco,
  sharedSecret,
  interfaceName,
} from '../src';

describe('relay frames', () => {
  it('splits a stream into frames, whatever the chunking', () => {
    const key = Buffer.alloc(32, 7);
    const frames = [
      encodeFrame(FrameType.Ping, Buffer.from('12345678')),
      encodePacketFrame(FrameType.SendPacket, key, Buffer.alloc(3000, 1)),
      encodeFrame(FrameType.ClientHello, '{"v":1}'),
    ];
    const stream = Buffer.concat(frames);
    for (const size of [1, 7, 64, 4096, stream.length]) {
      const decoder = new FrameDecoder();
      const seen = [];
      for (let i = 0; i < stream.length; i += size) seen.push(...decoder.push(stream.subarray(i, i + size)));
      expect(seen.map((f) => Buffer.from(f.raw))).toEqual(frames);
      expect(seen[1]!.body.subarray(0, 32)).toEqual(key);
      expect(decoder.buffered).toBe(0);
    }
  });

  it('refuses a frame longer than the limit before reading it', () => {
    const header = Buffer.from([FrameType.SendPacket, 0xff, 0xff, 0xff, 0xff]);
    expect(() => new FrameDecoder().push(header)).toThrow(FrameTooLargeError);
  });
});

describe('STUN', () => {
  it('round-trips a Binding request and a success with XOR-MAPPED-ADDRESS', () => {
    const txid = Buffer.alloc(12, 9);
    expect(decodeStun(encodeBindingRequest(txid))).toEqual({ kind: 'request', transactionId: txid });
    expect(decodeStun(encodeBindingSuccess(txid, '203.0.113.77', 40123))).toEqual({
      kind: 'success',
      transactionId: txid,
      mapped: { address: '203.0.113.77', port: 40123 },
    });
    expect(decodeStun(Buffer.from('not stun at all, really'))).toBeNull();
  });

  it('decodes an answer of another STUN server (RFC 5769 sample response, IPv4)', () => {
    const sample = Buffer.from(
      '0101003c2112a442b7e7a701bc34d686fa87dfae8022000b7465737420766563746f7220002000080001a147e112a643' +
        '000800146b2a7b1b3a5b1c0e5e3e4d2b3a4c5d6e7f809192800400047c3c9a00',
      'hex',
    );
    expect(decodeStun(sample)?.mapped).toEqual({ address: '192.0.2.1', port: 32853 });
  });
});

describe('keys', () => {
  it('derives the public key of RFC 7748’s test vector', () => {
    const alice = Buffer.from(
      '77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a',
      'hex',
    ).toString('base64');
    expect(Buffer.from(publicKeyOf(alice), 'base64').toString('hex')).toBe(
      '8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a',
    );
  });

  it('generates clamped pairs whose shared secret is the same at both ends', () => {
    const a = generateKeyPair();
    const b = generateKeyPair();
    const raw = keyBytes(a.privateKey);
    expect(raw[0]! & 7).toBe(0);
    expect(raw[31]! & 0xc0).toBe(0x40);
    expect(sharedSecret(a.privateKey, b.publicKey)).toEqual(sharedSecret(b.privateKey, a.publicKey));
  });

  it('names interfaces uniquely per (job, key), within 15 characters', () => {
    const a = generateKeyPair().publicKey;
    const b = generateKeyPair().publicKey;
    expect(interfaceName('job-1', a)).toMatch(/^gpn[0-9a-f]{10}$/);
    expect(interfaceName('job-1', a)).not.toBe(interfaceName('job-1', b));
    expect(interfaceName('job-1', a)).not.toBe(interfaceName('job-2', a));
  });
});

describe('disco probes', () => {
  const a = generateKeyPair();
  const b = generateKeyPair();
  const key = discoKey(a.privateKey, b.publicKey);

  it.each([
    { type: 'ping' as const, txid: Buffer.alloc(12, 1), confirmed: true },
    { type: 'pong' as const, txid: Buffer.alloc(12, 2), observed: '203.0.113.4:5555' },
    { type: 'bulk' as const, probeId: 7, seq: 3, padding: 1200 },
    { type: 'bulk-end' as const, probeId: 7, packets: 96, bytes: 121_000 },
    { type: 'bulk-report' as const, probeId: 7, packets: 95, bytes: 120_000, spanMicros: 5000 },
  ])('round-trips a $type, authenticated by the pair’s key', (message) => {
    const sealed = sealDisco(message, keyBytes(a.publicKey), key);
    expect(isDisco(sealed)).toBe(true);
    expect(openDisco(sealed, discoKey(b.privateKey, a.publicKey))).toEqual(message);
  });

  it('rejects a probe under another key or tampered with, and never looks like WireGuard', () => {
    const sealed = sealDisco(
      { type: 'ping', txid: Buffer.alloc(12), confirmed: false },
      keyBytes(a.publicKey),
      key,
    );
    expect(openDisco(sealed, discoKey(a.privateKey, generateKeyPair().publicKey))).toBeNull();
    const tampered = Buffer.from(sealed);
    tampered[40]! ^= 1;
    expect(openDisco(tampered, key)).toBeNull();
    expect(sealed[0]).toBeGreaterThan(4);
  });
});
