import { connect } from 'node:net';
import { keyFromHex, keyToHex, publicKeyOf } from '../keys';

/*
 * WireGuard's cross-platform configuration protocol ("UAPI"), which wireguard-go serves on
 * `/var/run/wireguard/<ifname>.sock`: `set=1` or `get=1`, then `key=value` lines, then an empty
 * line; the answer ends with `errno=<n>` and an empty line. Keys travel in hex.
 */

/** One peer as we configure it. */
export interface PeerConfig {
  /** base64. */
  readonly publicKey: string;
  /** `ip:port`; null leaves WireGuard to learn it from the peer's first authenticated packet. */
  readonly endpoint: string | null;
  readonly allowedIps: readonly string[];
  /** Seconds between keepalives (keeps NAT mappings open); 0 turns them off. */
  readonly persistentKeepaliveSec: number;
}

export interface DeviceConfig {
  /** base64. */
  readonly privateKey?: string;
  /** UDP port; 0 lets the device pick one. */
  readonly listenPort?: number;
  /** Replace every peer by `peers` (default: peers are added or updated). */
  readonly replacePeers?: boolean;
  readonly peers?: readonly PeerConfig[];
  /** Peers to remove (base64 public keys). */
  readonly removePeers?: readonly string[];
}

export interface PeerState {
  readonly publicKey: string;
  readonly endpoint: string | null;
  /** ms since the epoch; null before the first handshake. */
  readonly lastHandshakeAtMs: number | null;
  readonly txBytes: number;
  readonly rxBytes: number;
  readonly allowedIps: readonly string[];
  readonly persistentKeepaliveSec: number;
}

export interface DeviceState {
  readonly publicKey: string | null;
  readonly listenPort: number;
  readonly peers: readonly PeerState[];
}

export class UapiError extends Error {
  override readonly name = 'UapiError';
  readonly code = 'UAPI_ERROR' as const;
  constructor(
    message: string,
    /** The errno the device answered, when it answered one. */
    readonly errno?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The `set=1` request for a configuration (without the final empty line). */
export const setRequestLines = (config: DeviceConfig): string[] => {
  const lines = ['set=1'];
  if (config.privateKey !== undefined) lines.push(`private_key=${keyToHex(config.privateKey)}`);
  if (config.listenPort !== undefined) lines.push(`listen_port=${config.listenPort}`);
  if (config.replacePeers) lines.push('replace_peers=true');
  for (const key of config.removePeers ?? []) lines.push(`public_key=${keyToHex(key)}`, 'remove=true');
  for (const peer of config.peers ?? []) {
    lines.push(`public_key=${keyToHex(peer.publicKey)}`);
    if (peer.endpoint !== null) lines.push(`endpoint=${peer.endpoint}`);
    lines.push(`persistent_keepalive_interval=${peer.persistentKeepaliveSec}`);
    lines.push('replace_allowed_ips=true');
    for (const ip of peer.allowedIps) lines.push(`allowed_ip=${ip}`);
  }
  return lines;
};

/** Parses a `get=1` answer (the lines before `errno=`). */
export const parseGetResponse = (text: string): DeviceState => {
  let publicKey: string | null = null;
  let listenPort = 0;
  const peers: PeerState[] = [];
  let peer: { -readonly [K in keyof PeerState]: PeerState[K] } | undefined;
  let handshakeSec = 0;
  let handshakeNsec = 0;
  const flush = () => {
    if (peer) {
      peer.lastHandshakeAtMs =
        handshakeSec === 0 && handshakeNsec === 0
          ? null
          : handshakeSec * 1000 + Math.floor(handshakeNsec / 1e6);
      peers.push(peer);
    }
  };
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq < 0) continue;
    const key = line.slice(0, eq);
    const value = line.slice(eq + 1);
    switch (key) {
      case 'public_key':
        flush();
        handshakeSec = 0;
        handshakeNsec = 0;
        peer = {
          publicKey: keyFromHex(value),
          endpoint: null,
          lastHandshakeAtMs: null,
          txBytes: 0,
          rxBytes: 0,
          allowedIps: [],
          persistentKeepaliveSec: 0,
        };
        break;
      case 'private_key':
        publicKey = /^0{64}$/.test(value) ? null : publicKeyOf(keyFromHex(value));
        break;
      case 'listen_port':
        listenPort = Number(value);
        break;
      case 'endpoint':
        if (peer) peer.endpoint = value;
        break;
      case 'last_handshake_time_sec':
        handshakeSec = Number(value);
        break;
      case 'last_handshake_time_nsec':
        handshakeNsec = Number(value);
        break;
      case 'tx_bytes':
        if (peer) peer.txBytes = Number(value);
        break;
      case 'rx_bytes':
        if (peer) peer.rxBytes = Number(value);
        break;
      case 'persistent_keepalive_interval':
        if (peer) peer.persistentKeepaliveSec = Number(value);
        break;
      case 'allowed_ip':
        if (peer) peer.allowedIps = [...peer.allowedIps, value];
        break;
      default:
        break;
    }
  }
  flush();
  return { publicKey, listenPort, peers };
};

/** A UAPI conversation: sends `request` (lines, without the final empty line) and returns the answer's lines. */
export const uapiRequest = (
  socketPath: string,
  request: readonly string[],
  timeoutMs = 5_000,
): Promise<string> =>
  new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    let answer = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new UapiError(`${socketPath} did not answer within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(`${request.join('\n')}\n\n`));
    socket.on('data', (chunk: string) => {
      answer += chunk;
      const m = /(?:^|\n)errno=(-?\d+)\n\n$/.exec(answer);
      if (!m) return;
      clearTimeout(timer);
      socket.end();
      const errno = Number(m[1]);
      if (errno !== 0) reject(new UapiError(`${socketPath} answered errno=${errno} to ${request[0]}`, errno));
      else resolve(answer.slice(0, m.index));
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(new UapiError(`${socketPath}: ${error.message}`, undefined, { cause: error }));
    });
  });

/** Configures a device over its UAPI socket. */
export const uapiSet = async (socketPath: string, config: DeviceConfig): Promise<void> => {
  await uapiRequest(socketPath, setRequestLines(config));
};

/** Reads a device's state over its UAPI socket. */
export const uapiGet = async (socketPath: string): Promise<DeviceState> =>
  parseGetResponse(await uapiRequest(socketPath, ['get=1']));
