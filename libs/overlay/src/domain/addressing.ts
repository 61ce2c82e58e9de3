/*
 * Overlay addressing: one IPv4 network per job (a /24 by default) taken from a pool, one address per
 * (job, host) in it. Pure: the control plane calls it with what is in use.
 */

/** A job network, or the pool jobs' networks come from. */
export interface Ipv4Network {
  /** Network address as an unsigned 32-bit integer. */
  readonly base: number;
  readonly prefixLength: number;
}

/**
 * Default pool: inside RFC 6598's shared address space (100.64.0.0/10), which carrier NATs use
 * between themselves and customers and which providers' LANs and clouds' VPCs rarely route.
 * 100.96.0.0/12 holds 4 096 job networks of /24.
 */
export const DEFAULT_OVERLAY_POOL = '100.96.0.0/12';
/** Default job network size: 253 hosts per job (the network, .0, and broadcast, .255, are never used). */
export const DEFAULT_JOB_PREFIX_LENGTH = 24;

export class InvalidAddressError extends Error {
  override readonly name = 'InvalidAddressError';
  readonly code = 'INVALID_ADDRESS' as const;
}

export class OverlayPoolExhaustedError extends Error {
  override readonly name = 'OverlayPoolExhaustedError';
  readonly code = 'OVERLAY_POOL_EXHAUSTED' as const;
}

/** `10.1.2.3` → its unsigned 32-bit value. */
export const parseIpv4 = (text: string): number => {
  const parts = text.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^(0|[1-9][0-9]{0,2})$/.test(p) || Number(p) > 255))
    throw new InvalidAddressError(`not an IPv4 address: ${JSON.stringify(text)}`);
  return parts.reduce((acc, p) => acc * 256 + Number(p), 0);
};

export const formatIpv4 = (value: number): string =>
  [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');

const size = (prefixLength: number) => 2 ** (32 - prefixLength);

/** `100.96.3.0/24` → network; the address must be the network's first. */
export const parseCidr = (text: string): Ipv4Network => {
  const [address, prefix, extra] = text.split('/');
  if (address === undefined || prefix === undefined || extra !== undefined || !/^[0-9]{1,2}$/.test(prefix))
    throw new InvalidAddressError(`not a CIDR: ${JSON.stringify(text)}`);
  const prefixLength = Number(prefix);
  if (prefixLength > 32) throw new InvalidAddressError(`prefix length over 32: ${text}`);
  const base = parseIpv4(address);
  if (base % size(prefixLength) !== 0) throw new InvalidAddressError(`${text} has host bits set`);
  return { base, prefixLength };
};

export const formatCidr = (network: Ipv4Network): string =>
  `${formatIpv4(network.base)}/${network.prefixLength}`;

export const contains = (network: Ipv4Network, address: number): boolean =>
  address >= network.base && address < network.base + size(network.prefixLength);

export const overlaps = (a: Ipv4Network, b: Ipv4Network): boolean =>
  a.base < b.base + size(b.prefixLength) && b.base < a.base + size(a.prefixLength);

/**
 * The first network of `prefixLength` in `pool` that overlaps none of `used` (job networks in use)
 * nor `avoid` (networks the hosts themselves use: a job network must not shadow a provider's LAN).
 * Deterministic: the same inputs give the same network.
 */
export const allocateJobNetwork = (
  used: readonly string[],
  options: { pool?: string; prefixLength?: number; avoid?: readonly string[] } = {},
): string => {
  const pool = parseCidr(options.pool ?? DEFAULT_OVERLAY_POOL);
  const prefixLength = options.prefixLength ?? DEFAULT_JOB_PREFIX_LENGTH;
  if (prefixLength < pool.prefixLength || prefixLength > 30)
    throw new InvalidAddressError(`a job network of /${prefixLength} does not fit in ${formatCidr(pool)}`);
  const taken = [...used, ...(options.avoid ?? [])].map(parseCidr);
  const step = size(prefixLength);
  for (let base = pool.base; base < pool.base + size(pool.prefixLength); base += step) {
    const candidate = { base, prefixLength };
    if (!taken.some((t) => overlaps(t, candidate))) return formatCidr(candidate);
  }
  throw new OverlayPoolExhaustedError(`no free /${prefixLength} left in ${formatCidr(pool)}`);
};

/** Host `index` (0-based) of a job network: `.1`, `.2`, … */
export const hostAddress = (networkCidr: string, index: number): string => {
  const network = parseCidr(networkCidr);
  const hosts = size(network.prefixLength) - 2;
  if (!Number.isInteger(index) || index < 0 || index >= hosts)
    throw new OverlayPoolExhaustedError(
      `${networkCidr} has ${hosts} host addresses; index ${index} is outside`,
    );
  return formatIpv4(network.base + 1 + index);
};

/**
 * Addresses of a job's hosts, in the order given (the control plane passes them sorted by rank, so
 * the host of rank 0 — `MASTER_ADDR` — gets `.1`).
 */
export const assignHostAddresses = (
  networkCidr: string,
  hosts: readonly string[],
): Record<string, string> => {
  if (new Set(hosts).size !== hosts.length) throw new InvalidAddressError('a host appears twice in the job');
  return Object.fromEntries(hosts.map((host, i) => [host, hostAddress(networkCidr, i)]));
};
