import { describe, expect, it } from 'vitest';
import { InvalidRelayConfigError, relayConfigFromEnv } from '../src/app/relay.config';

const key = Buffer.alloc(32, 1).toString('base64');

describe('relayConfigFromEnv', () => {
  it('has defaults for everything but the verification keys', () => {
    expect(relayConfigFromEnv({ RELAY_VERIFY_KEYS: key })).toEqual({
      relayId: 'relay-1',
      host: '0.0.0.0',
      port: 8443,
      stunPorts: [3478, 3479],
      verifyKeys: [key],
      jobRateBytesPerSec: 0,
      jobBurstBytes: 4 * 1024 * 1024,
      tlsCertFile: null,
      tlsKeyFile: null,
    });
  });

  it('lists every bad setting at once', () => {
    const error = (() => {
      try {
        relayConfigFromEnv({ RELAY_PORT: '70000', RELAY_TLS_CERT: '/cert.pem' });
      } catch (e) {
        return e as InvalidRelayConfigError;
      }
    })();
    expect(error).toBeInstanceOf(InvalidRelayConfigError);
    expect(error!.issues.map((i) => i.path).sort()).toEqual(['port', 'tlsCertFile', 'verifyKeys']);
  });

  it('takes both TLS files or neither', () => {
    expect(() => relayConfigFromEnv({ RELAY_VERIFY_KEYS: key, RELAY_TLS_KEY: '/key.pem' })).toThrow(
      InvalidRelayConfigError,
    );
  });
});
