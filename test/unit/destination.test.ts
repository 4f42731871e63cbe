// The webhook destination guard, pure (no database; names resolve through the system resolver, so only
// `localhost` and the reserved `.invalid` are used). Only global addresses may receive webhooks: each case below
// changes one part of the URL and checks the outcome and the reason given, so that refusing every address, or
// refusing for the wrong reason, fails here.
import test from 'ava';
import ipaddr from 'ipaddr.js';
import {
  addressRefusal,
  carriedIPv4,
  DestinationRefused,
  resolveDestination,
} from '../../server/platform/webhooks/destination.js';

const production = { allowLoopback: false };
const local = { allowLoopback: true };
const unreachable = 'which webhooks may not reach';

async function refusedWith(url: string, policy = production): Promise<string> {
  const error = await resolveDestination(url, policy).then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof DestinationRefused)) throw new Error(`${url} was not refused (${String(error)})`);
  return error.message;
}

test('the webhook guard with a public destination accepted: a global IPv4 or IPv6 address is accepted and is the address to connect to', async (t) => {
  const v4 = await resolveDestination('https://8.8.8.8/hook?x=1', production);
  t.deepEqual(
    { url: v4.url.href, address: v4.address, family: v4.family },
    { url: 'https://8.8.8.8/hook?x=1', address: '8.8.8.8', family: 4 },
  );
  const v6 = await resolveDestination('https://[2606:4700:4700::1111]:8443/hook', production);
  t.deepEqual(
    { url: v6.url.href, address: v6.address, family: v6.family },
    { url: 'https://[2606:4700:4700::1111]:8443/hook', address: '2606:4700:4700::1111', family: 6 },
  );
  for (const address of [
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8',
  ]) {
    t.is(addressRefusal(address, production), null, address);
  }
});

test('IPv6 bracket handling: the brackets of an IPv6 literal are removed before it is judged, and the address connected to is the bare one', async (t) => {
  t.is(
    await refusedWith('https://[::1]/hook'),
    '::1 resolves to ::1, a loopback address, which webhooks may not reach',
  );
  t.is(
    await refusedWith('https://[fd00::1]:8443/hook'),
    'fd00::1 resolves to fd00::1, a uniqueLocal address, which webhooks may not reach',
  );
  const loopback = await resolveDestination('http://[::1]:8080/hook', local);
  t.deepEqual(
    { address: loopback.address, family: loopback.family, host: loopback.url.host },
    { address: '::1', family: 6, host: '[::1]:8080' },
  );
});

test('https://token@host/ with a user name and no password is refused, like a password alone or both', async (t) => {
  for (const url of [
    'https://token@8.8.8.8/hook',
    'https://:secret@8.8.8.8/hook',
    'https://user:secret@8.8.8.8/hook',
  ]) {
    t.is(await refusedWith(url), 'webhook URLs must not carry credentials', url);
  }
});

test('the scheme: https always; plain http only with WEBHOOK_ALLOW_LOOPBACK; nothing else ever', async (t) => {
  t.is(await refusedWith('http://8.8.8.8/hook'), 'webhook URLs must use https');
  t.is((await resolveDestination('http://127.0.0.1:9/hook', local)).address, '127.0.0.1');
  t.is(await refusedWith('ftp://8.8.8.8/hook', local), 'webhook URLs must use https');
  t.is(await refusedWith('not a url'), 'not a url is not a URL');
});

test('names are resolved and every address judged: localhost is refused, a name that does not resolve is refused, and with WEBHOOK_ALLOW_LOOPBACK localhost is accepted at an address it resolves to', async (t) => {
  t.regex(
    await refusedWith('https://localhost/hook'),
    /^localhost resolves to (127\.0\.0\.1|::1), a loopback address, which webhooks may not reach$/,
  );
  t.is(await refusedWith('https://no-such-host.invalid/hook'), 'no-such-host.invalid does not resolve');
  const accepted = await resolveDestination('http://localhost:9/hook', local);
  t.true(['127.0.0.1', '::1'].includes(accepted.address), accepted.address);
  t.is(accepted.family, accepted.address === '::1' ? 6 : 4);
});

const refusedIPv4: [string, string][] = [
  ['127.0.0.1', 'loopback'],
  ['10.1.2.3', 'private'],
  ['172.16.0.1', 'private'],
  ['192.168.1.1', 'private'],
  ['169.254.169.254', 'linkLocal'],
  ['100.64.0.1', 'carrierGradeNat'],
  ['224.0.0.1', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['192.0.2.1', 'reserved'],
  ['255.255.255.255', 'broadcast'],
  ['0.0.0.0', 'unspecified'],
];
for (const [address, range] of refusedIPv4) {
  test(`an inside IPv4 address is refused with its range named: ${address} (${range})`, async (t) => {
    t.is(addressRefusal(address, production), `a ${range} address, ${unreachable}`);
    t.is(
      await refusedWith(`https://${address}/hook`),
      `${address} resolves to ${address}, a ${range} address, ${unreachable}`,
    );
  });
}

const refusedIPv6: [string, string][] = [
  ['::1', 'a loopback address'],
  ['fe80::1', 'a linkLocal address'],
  ['fd00::1', 'a uniqueLocal address'],
  ['ff02::1', 'a multicast address'],
  ['2001:db8::1', 'a reserved address'],
  ['100::1', 'a discard address'],
  ['fec0::1', 'a deprecatedSiteLocal address'],
];
for (const [address, reason] of refusedIPv6) {
  test(`an inside IPv6 address is refused with its range named: ${address}`, (t) => {
    t.is(addressRefusal(address, production), `${reason}, ${unreachable}`);
  });
}

// Issue 11, defect 3: IPv6 forms that carry an IPv4 address are judged by it, or refused.
const carriers: [string, string, string][] = [
  [
    'IPv4-compatible loopback (::/96)',
    '::127.0.0.1',
    `which carries the IPv4 address 127.0.0.1, a loopback address, ${unreachable}`,
  ],
  [
    'IPv4-compatible link-local, the metadata service (::/96)',
    '::a9fe:a9fe',
    `which carries the IPv4 address 169.254.169.254, a linkLocal address, ${unreachable}`,
  ],
  [
    'IPv4-compatible private (::/96)',
    '::10.0.0.1',
    `which carries the IPv4 address 10.0.0.1, a private address, ${unreachable}`,
  ],
  [
    'IPv4-mapped loopback (::ffff:0:0/96)',
    '::ffff:127.0.0.1',
    `which carries the IPv4 address 127.0.0.1, a loopback address, ${unreachable}`,
  ],
  [
    'IPv4-mapped link-local (::ffff:0:0/96)',
    '::ffff:a9fe:a9fe',
    `which carries the IPv4 address 169.254.169.254, a linkLocal address, ${unreachable}`,
  ],
  [
    'NAT64 loopback (64:ff9b::/96)',
    '64:ff9b::127.0.0.1',
    `which carries the IPv4 address 127.0.0.1, a loopback address, ${unreachable}`,
  ],
  [
    'NAT64 private (64:ff9b::/96)',
    '64:ff9b::c0a8:101',
    `which carries the IPv4 address 192.168.1.1, a private address, ${unreachable}`,
  ],
  [
    'local-use NAT64, even of a public address (64:ff9b:1::/48)',
    '64:ff9b:1::808:808',
    `a rfc6052 address, ${unreachable}`,
  ],
  [
    '6to4 of loopback (2002::/16)',
    '2002:7f00:1::1',
    `which carries the IPv4 address 127.0.0.1, a loopback address, ${unreachable}`,
  ],
  [
    '6to4 of link-local (2002::/16)',
    '2002:a9fe:a9fe::1',
    `which carries the IPv4 address 169.254.169.254, a linkLocal address, ${unreachable}`,
  ],
  ['Teredo (2001::/32)', '2001:0:4136:e378:8000:63bf:3fff:fdd2', `a teredo address, ${unreachable}`],
  ['Teredo carrying loopback (2001::/32)', '2001:0:7f00:1::', `a teredo address, ${unreachable}`],
  ['SIIT (::ffff:0:0:0/96)', '::ffff:0:808:808', `a rfc6145 address, ${unreachable}`],
  [
    'outside 2000::/3 and in no named range',
    '4000::1',
    `an address outside the global unicast space 2000::/3, ${unreachable}`,
  ],
];
for (const [what, address, reason] of carriers) {
  test(`an IPv6 address that embeds an IPv4 address is judged by it or refused: ${what} ${address}`, async (t) => {
    t.is(addressRefusal(address, production), reason);
    const host = new URL(`https://[${address}]/`).hostname.slice(1, -1); // as the URL writes it: ::127.0.0.1 is ::7f00:1
    t.is(await refusedWith(`https://[${address}]/hook`), `${host} resolves to ${host}, ${reason}`);
  });
}

test('an IPv6 address that carries a public IPv4 address is judged by it and accepted', (t) => {
  for (const address of ['::ffff:8.8.8.8', '64:ff9b::8.8.8.8', '2002:808:808::1', '::8.8.8.8'])
    t.is(addressRefusal(address, production), null, address);
  t.is(carriedIPv4(ipaddr.IPv6.parse('2002:c0a8:1fe::1'))?.toString(), '192.168.1.254');
  t.is(carriedIPv4(ipaddr.IPv6.parse('64:ff9b::a9fe:fe01'))?.toString(), '169.254.254.1');
  t.is(carriedIPv4(ipaddr.IPv6.parse('2606:4700::1111')), null);
});

test('WEBHOOK_ALLOW_LOOPBACK lets loopback through (also carried in IPv6), never private, link-local or unspecified', (t) => {
  t.is(addressRefusal('127.0.0.1', local), null);
  t.is(addressRefusal('::1', local), null);
  t.is(addressRefusal('::ffff:127.0.0.1', local), null);
  t.is(addressRefusal('10.0.0.1', local), `a private address, ${unreachable}`);
  t.is(
    addressRefusal('::a9fe:a9fe', local),
    `which carries the IPv4 address 169.254.169.254, a linkLocal address, ${unreachable}`,
  );
  t.is(addressRefusal('::', local), `which carries the IPv4 address 0.0.0.0, a unspecified address, ${unreachable}`);
  t.is(addressRefusal('fe80::1', local), `a linkLocal address, ${unreachable}`);
});

test('something that is not an IP address is refused as such', (t) => {
  t.is(addressRefusal('example.com', production), 'which is not an IP address');
  t.is(addressRefusal('', local), 'which is not an IP address');
});
