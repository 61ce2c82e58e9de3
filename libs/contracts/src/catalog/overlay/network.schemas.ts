import { z } from 'zod';

/** A WireGuard (X25519) public key: 32 bytes, standard base64 with padding (44 characters). */
export const WireGuardKeySchema = z
  .string()
  .regex(/^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/, 'must be a WireGuard key: 32 bytes in base64 (44 chars)');

const octet = '(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const ipv4 = `${octet}\\.${octet}\\.${octet}\\.${octet}`;
const port = '([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])';

/** An IPv4 address: `100.96.3.1`. */
export const Ipv4AddressSchema = z.string().regex(new RegExp(`^${ipv4}$`), 'must be an IPv4 address');

/** An IPv4 network: `100.96.3.0/24`. */
export const Ipv4CidrSchema = z
  .string()
  .regex(new RegExp(`^${ipv4}/([0-9]|[12][0-9]|3[0-2])$`), 'must be an IPv4 network like 100.96.3.0/24');

/** A UDP endpoint: `203.0.113.7:51820`. */
export const UdpEndpointSchema = z
  .string()
  .regex(new RegExp(`^${ipv4}:${port}$`), 'must be an IPv4 endpoint like 203.0.113.7:51820');
