// Where a webhook may go. The name is resolved once, every address checked, and the caller then connects to
// exactly the address checked (see `address` in the result), so DNS rebinding cannot turn a public name into an
// inside address between the check and the connection. Checked when an endpoint is added and again at every send.
// The connections to the accounting and fiscal systems follow the same rules (server/connectors/guarded-fetch.ts).
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

export interface DestinationPolicy {
  /** Tests and local trials (WEBHOOK_ALLOW_LOOPBACK): loopback addresses and plain http are allowed. */
  allowLoopback: boolean;
  /** What the URL is for, in refusals ("webhook URLs must use https"); `webhook` unless said. */
  purpose?: 'webhook' | 'connector';
}

export interface Destination {
  url: URL;
  /** The address to connect to: the one that was checked. */
  address: string;
  family: 4 | 6;
}

export class DestinationRefused extends Error {}
/** The name does not resolve (now): refused for a send, but no judgement of where it would lead. */
export class DestinationUnresolved extends DestinationRefused {}

export async function resolveDestination(rawUrl: string, policy: DestinationPolicy): Promise<Destination> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new DestinationRefused(`${rawUrl} is not a URL`);
  }
  if (url.protocol !== 'https:' && !(policy.allowLoopback && url.protocol === 'http:')) {
    throw new DestinationRefused(`${policy.purpose ?? 'webhook'} URLs must use https`);
  }
  if (url.username || url.password)
    throw new DestinationRefused(`${policy.purpose ?? 'webhook'} URLs must not carry credentials`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = ipaddr.isValid(host)
    ? [{ address: host, family: ipaddr.parse(host).kind() === 'ipv6' ? 6 : 4 }]
    : await lookup(host, { all: true, verbatim: true }).catch(() => {
        throw new DestinationUnresolved(`${host} does not resolve`);
      });
  if (addresses.length === 0) throw new DestinationUnresolved(`${host} does not resolve`);
  for (const { address } of addresses) {
    const refusal = addressRefusal(address, policy);
    if (refusal) throw new DestinationRefused(`${host} resolves to ${address}, ${refusal}`);
  }
  const first = addresses[0]!;
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}

/** IPv6 space that is global unicast (RFC 4291): anything outside it never receives webhooks. */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');
/**
 * IPv6 forms that carry an IPv4 address and reach it: IPv4-compatible (::/96, deprecated), IPv4-mapped
 * (::ffff:0:0/96) and the well-known NAT64 prefix (64:ff9b::/96) hold it in their last 32 bits, 6to4 (2002::/16)
 * in bits 16 to 47. Such an address is judged as the IPv4 address it carries. Other forms that embed one (the
 * local-use NAT64 prefix 64:ff9b:1::/48, SIIT ::ffff:0:0:0/96, Teredo 2001::/32 with its client address
 * obfuscated) are not global unicast, so the rule below refuses them.
 */
const CARRIERS: [ipaddr.IPv6, number, (parts: number[]) => [number, number]][] = [
  [...(ipaddr.parseCIDR('::/96') as [ipaddr.IPv6, number]), (parts) => [parts[6]!, parts[7]!]],
  [...(ipaddr.parseCIDR('::ffff:0:0/96') as [ipaddr.IPv6, number]), (parts) => [parts[6]!, parts[7]!]],
  [...(ipaddr.parseCIDR('64:ff9b::/96') as [ipaddr.IPv6, number]), (parts) => [parts[6]!, parts[7]!]],
  [...(ipaddr.parseCIDR('2002::/16') as [ipaddr.IPv6, number]), (parts) => [parts[1]!, parts[2]!]],
];

/** The IPv4 address an IPv6 address carries (see CARRIERS), or null. */
export function carriedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4 | null {
  for (const [prefix, bits, words] of CARRIERS) {
    if (!ip.match(prefix, bits)) continue;
    const [high, low] = words(ip.parts);
    return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  }
  return null;
}

/**
 * Why an address may not receive webhooks, or null when it may. Only what is known to be global may: IPv4
 * unicast outside every special range, IPv6 global unicast (2000::/3) outside every special range, and an IPv6
 * address that carries an IPv4 address only when that one may. Loopback only with WEBHOOK_ALLOW_LOOPBACK.
 */
export function addressRefusal(address: string, policy: DestinationPolicy): string | null {
  if (!ipaddr.isValid(address)) return 'which is not an IP address';
  const ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6;
    const range = v6.range();
    // ::1 lies in ::/96 too; it is loopback, not 0.0.0.1.
    if (range !== 'loopback') {
      const carried = carriedIPv4(v6);
      if (carried) {
        const refusal = addressRefusal(carried.toString(), policy);
        return refusal && `which carries the IPv4 address ${carried.toString()}, ${refusal}`;
      }
      if (range === 'unicast' && !v6.match(GLOBAL_UNICAST))
        return `an address outside the global unicast space 2000::/3, which ${policy.purpose ?? 'webhook'}s may not reach`;
    }
    return rangeRefusal(range, policy);
  }
  return rangeRefusal(ip.range(), policy);
}

function rangeRefusal(range: string, policy: DestinationPolicy): string | null {
  if (range === 'unicast') return null;
  if (range === 'loopback' && policy.allowLoopback) return null;
  return `a ${range} address, which ${policy.purpose ?? 'webhook'}s may not reach`;
}
