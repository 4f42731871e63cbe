// Where a webhook may go. The name is resolved once, every address checked, and the caller then connects to
// exactly the address checked (see `address` in the result), so DNS rebinding cannot turn a public name into an
// inside address between the check and the connection. Checked when an endpoint is added and again at every send.
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

export interface DestinationPolicy {
  /** Tests and local trials (WEBHOOK_ALLOW_LOOPBACK): loopback addresses and plain http are allowed. */
  allowLoopback: boolean;
}

export interface Destination {
  url: URL;
  /** The address to connect to: the one that was checked. */
  address: string;
  family: 4 | 6;
}

export class DestinationRefused extends Error {}

export async function resolveDestination(rawUrl: string, policy: DestinationPolicy): Promise<Destination> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new DestinationRefused(`${rawUrl} is not a URL`);
  }
  if (url.protocol !== 'https:' && !(policy.allowLoopback && url.protocol === 'http:')) {
    throw new DestinationRefused('webhook URLs must use https');
  }
  if (url.username || url.password) throw new DestinationRefused('webhook URLs must not carry credentials');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = ipaddr.isValid(host)
    ? [{ address: host, family: ipaddr.parse(host).kind() === 'ipv6' ? 6 : 4 }]
    : await lookup(host, { all: true, verbatim: true }).catch(() => { throw new DestinationRefused(`${host} does not resolve`); });
  if (addresses.length === 0) throw new DestinationRefused(`${host} does not resolve`);
  for (const { address } of addresses) {
    const refusal = addressRefusal(address, policy);
    if (refusal) throw new DestinationRefused(`${host} resolves to ${address}, ${refusal}`);
  }
  const first = addresses[0]!;
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}

/** Why an address may not receive webhooks, or null when it may: only global unicast addresses may. */
export function addressRefusal(address: string, policy: DestinationPolicy): string | null {
  if (!ipaddr.isValid(address)) return 'which is not an IP address';
  const ip = ipaddr.process(address); // an IPv4-mapped IPv6 address is judged as the IPv4 address it carries
  const range = ip.range();
  if (range === 'unicast') return null;
  if (range === 'loopback' && policy.allowLoopback) return null;
  return `a ${range} address, which webhooks may not reach`;
}
