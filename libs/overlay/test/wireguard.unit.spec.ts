import { describe, expect, it } from 'vitest';
import {
  AdmissionError,
  generateAdmissionKeys,
  generateKeyPair,
  issueAdmissionToken,
  keyToHex,
  parseGetResponse,
  parseWgDump,
  setRequestLines,
  verifyAdmissionToken,
  wgConfText,
} from '../src';

const own = generateKeyPair();
const peer = generateKeyPair();

describe('UAPI', () => {
  it('writes a configuration as set=1 lines, keys in hex', () => {
    expect(
      setRequestLines({
        privateKey: own.privateKey,
        listenPort: 51820,
        replacePeers: true,
        peers: [
          {
            publicKey: peer.publicKey,
            endpoint: '127.0.0.1:4000',
            allowedIps: ['100.96.0.2/32'],
            persistentKeepaliveSec: 10,
          },
        ],
      }),
    ).toEqual([
      'set=1',
      `private_key=${keyToHex(own.privateKey)}`,
      'listen_port=51820',
      'replace_peers=true',
      `public_key=${keyToHex(peer.publicKey)}`,
      'endpoint=127.0.0.1:4000',
      'persistent_keepalive_interval=10',
      'replace_allowed_ips=true',
      'allowed_ip=100.96.0.2/32',
    ]);
  });

  it('reads a get=1 answer of wireguard-go', () => {
    const answer = [
      `private_key=${keyToHex(own.privateKey)}`,
      'listen_port=41000',
      `public_key=${keyToHex(peer.publicKey)}`,
      'endpoint=192.168.10.3:45312',
      'last_handshake_time_sec=1700000000',
      'last_handshake_time_nsec=500000000',
      'tx_bytes=560',
      'rx_bytes=468',
      'persistent_keepalive_interval=10',
      'allowed_ip=100.96.7.2/32',
      'protocol_version=1',
    ].join('\n');
    expect(parseGetResponse(answer)).toEqual({
      publicKey: own.publicKey,
      listenPort: 41000,
      peers: [
        {
          publicKey: peer.publicKey,
          endpoint: '192.168.10.3:45312',
          lastHandshakeAtMs: 1_700_000_000_500,
          txBytes: 560,
          rxBytes: 468,
          allowedIps: ['100.96.7.2/32'],
          persistentKeepaliveSec: 10,
        },
      ],
    });
  });
});

describe('kernel backend formats', () => {
  it('writes wg setconf text and reads wg show dump', () => {
    const text = wgConfText(own.privateKey, 51820, [
      {
        publicKey: peer.publicKey,
        endpoint: null,
        allowedIps: ['100.96.0.2/32'],
        persistentKeepaliveSec: 10,
      },
    ]);
    expect(text).toBe(
      `[Interface]\nPrivateKey = ${own.privateKey}\nListenPort = 51820\n\n[Peer]\nPublicKey = ${peer.publicKey}\nAllowedIPs = 100.96.0.2/32\nPersistentKeepalive = 10\n`,
    );
    const dump = `${own.privateKey}\t${own.publicKey}\t51820\toff\n${peer.publicKey}\t(none)\t203.0.113.5:4000\t100.96.0.2/32\t1700000000\t10\t20\t25\n`;
    expect(parseWgDump(dump)).toEqual({
      publicKey: own.publicKey,
      listenPort: 51820,
      peers: [
        {
          publicKey: peer.publicKey,
          endpoint: '203.0.113.5:4000',
          lastHandshakeAtMs: 1_700_000_000_000,
          rxBytes: 10,
          txBytes: 20,
          allowedIps: ['100.96.0.2/32'],
          persistentKeepaliveSec: 25,
        },
      ],
    });
  });
});

describe('admission tokens', () => {
  const control = generateAdmissionKeys();
  const claims = { jobId: 'job-1', publicKey: own.publicKey, exp: 2_000, rateBytesPerSec: 1e6 };

  it('verifies a token signed by a trusted key (one of several)', () => {
    const token = issueAdmissionToken(claims, control.signingKey);
    expect(
      verifyAdmissionToken(token, [generateAdmissionKeys().verifyKey, control.verifyKey], 1_000),
    ).toEqual(claims);
  });

  it.each([
    {
      name: 'an untrusted signer',
      token: () => issueAdmissionToken(claims, generateAdmissionKeys().signingKey),
      reason: 'bad-signature',
    },
    {
      name: 'an expired token',
      token: () => issueAdmissionToken({ ...claims, exp: 999 }, control.signingKey),
      reason: 'expired',
    },
    {
      name: 'changed claims',
      token: () => {
        const [p, , s] = issueAdmissionToken(claims, control.signingKey).split('.');
        return `${p}.${Buffer.from(JSON.stringify({ ...claims, jobId: 'job-2' })).toString('base64url')}.${s}`;
      },
      reason: 'bad-signature',
    },
    { name: 'garbage', token: () => 'not-a-token', reason: 'malformed' },
  ])('rejects $name', ({ token, reason }) => {
    const error = (() => {
      try {
        verifyAdmissionToken(token(), [control.verifyKey], 1_000);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(AdmissionError);
    expect((error as AdmissionError).reason).toBe(reason);
  });
});
