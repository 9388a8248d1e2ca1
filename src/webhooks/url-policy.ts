// Where webhooks may go: http(s) URLs whose host resolves only to public addresses, so a
// tenant cannot make the service call into its own network (SSRF). WEBHOOK_ALLOW_PRIVATE
// lifts the address rule (for tests and for private deployments).
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['::ffff:0:0', 96], ['64:ff9b::', 96]] as const) blocked.addSubnet(net, bits, 'ipv6');

export function isPrivateAddress(ip: string): boolean {
  return blocked.check(ip, isIP(ip) === 6 ? 'ipv6' : 'ipv4');
}

/** Why this URL may not receive webhooks, or null when it may. */
export async function urlProblem(raw: string, allowPrivate: boolean): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be http or https';
  if (url.username || url.password) return 'must not carry credentials';
  if (allowPrivate) return null;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
  } catch {
    return `host ${host} does not resolve`;
  }
  const bad = addresses.find(isPrivateAddress);
  return bad ? `resolves to ${bad}, a private, loopback or link-local address (set WEBHOOK_ALLOW_PRIVATE=true to allow)` : null;
}
