// The egress address policy, one for every outbound call: webhooks and log streams (the
// destinations a tenant names), witnesses and the Time Stamping Authority (the operator's) may go
// only to http(s) URLs or hosts that resolve only to public addresses, so nobody makes the service
// call into its own network (SSRF). WEBHOOK_ALLOW_PRIVATE, STREAM_ALLOW_PRIVATE and
// WITNESS_ALLOW_PRIVATE (witnesses and the TSA) lift the address rule for their destinations (for
// tests and for private deployments). Every answer read from any of them is bounded (bounded.ts).
//
// The rule is applied twice: when an endpoint is registered (a clear 400 early), and again by
// the connection itself. `pinnedAgent` gives undici a `connect.lookup` that resolves the name
// once, refuses it if any address is private, and hands exactly the checked address to the
// socket, so a name that answers a public address to the check and a private one to the
// connection (DNS rebinding) never reaches the private one. The endpoint URL is attacker input.
import { lookup as dnsLookup } from 'node:dns/promises';
import type { lookup as callbackLookup, LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';

const v4 = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) v4.addSubnet(net, bits, 'ipv4');
// IPv6 ranges that are never a public destination (RFC 6890 and its successors): unique-local,
// link-local, site-local (deprecated, refused), multicast, documentation, discard-only, and the
// local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215: translated by the operator's own network).
// The forms that embed an IPv4 address are not listed here (Node's BlockList matches every IPv4
// address against an IPv4-mapped rule, which once refused every IPv4 webhook): their embedded
// IPv4 address is checked against the IPv4 rules instead (embeddedV4).
const v6 = new BlockList();
for (const [net, bits] of [['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['2001:db8::', 32], ['100::', 64], ['64:ff9b:1::', 48]] as const) v6.addSubnet(net, bits, 'ipv6');

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part included). */
function groupsOf(ip: string): number[] | undefined {
  let text = ip.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? missing !== 0 : missing < 0) return undefined;
  const groups = [...left, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...right].map((g) => parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => g >= 0 && g <= 0xffff) ? groups : undefined;
}

const v4Of = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * The IPv4 address an IPv6 address carries, for the forms that reach it: IPv4-compatible (::/96,
 * which also holds :: and ::1), IPv4-mapped (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96),
 * well-known NAT64 (64:ff9b::/96), 6to4 (2002::/16, the IPv4 address in bits 16–47) and Teredo
 * (2001::/32: the client's address, inverted, in the last 32 bits).
 */
function embeddedV4(g: number[]): string | undefined {
  const [a, b, c, d, e, f, hi, lo] = g as [number, number, number, number, number, number, number, number];
  const zero4 = a === 0 && b === 0 && c === 0 && d === 0;
  if (zero4 && e === 0 && (f === 0 || f === 0xffff)) return v4Of(hi, lo);
  if (zero4 && e === 0xffff && f === 0) return v4Of(hi, lo);
  if (a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0) return v4Of(hi, lo);
  if (a === 0x2002) return v4Of(b, c);
  if (a === 0x2001 && b === 0) return v4Of(hi ^ 0xffff, lo ^ 0xffff);
  return undefined;
}

/** Whether an address is one the service must not call (private, loopback, link-local, reserved), IPv4 or IPv6 in any spelling. */
export function isPrivateAddress(ip: string): boolean {
  if (isIP(ip) === 4) return v4.check(ip, 'ipv4');
  if (isIP(ip) !== 6) return true;
  const g = groupsOf(ip);
  if (!g) return true;
  const inner = embeddedV4(g);
  if (inner !== undefined && v4.check(inner, 'ipv4')) return true;
  return v6.check(ip, 'ipv6');
}

/** Resolves a host name to every address it has (injectable, so tests control DNS). */
export type Resolver = (host: string) => Promise<LookupAddress[]>;
export const systemResolver: Resolver = (host) => dnsLookup(host, { all: true });

/** The setting that lifts the address rule for a kind of destination. */
export type AllowPrivateSetting = 'WEBHOOK_ALLOW_PRIVATE' | 'STREAM_ALLOW_PRIVATE' | 'WITNESS_ALLOW_PRIVATE';
const hint = (setting: AllowPrivateSetting) => `a private, loopback or link-local address (set ${setting}=true to allow)`;
/** The same refusal for a log stream's destination, which STREAM_ALLOW_PRIVATE lifts. */
export const STREAM_PRIVATE_HINT = hint('STREAM_ALLOW_PRIVATE');

/**
 * Why this URL may not receive webhooks, or null when it may. Resolves a host name to check it,
 * unless `resolve` is null (the delivery, whose pinned connection checks the name itself).
 */
export async function urlProblem(raw: string, allowPrivate: boolean, resolve: Resolver | null = systemResolver, setting: AllowPrivateSetting = 'WEBHOOK_ALLOW_PRIVATE'): Promise<string | null> {
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
  if (resolve === null && !isIP(host)) return null;
  let addresses: string[];
  try {
    addresses = isIP(host) || resolve === null ? [host] : (await resolve(host)).map((a) => a.address);
  } catch {
    return `host ${host} does not resolve`;
  }
  if (addresses.length === 0) return `host ${host} does not resolve`;
  const bad = addresses.find(isPrivateAddress);
  return bad ? `resolves to ${bad}, ${hint(setting)}` : null;
}

/** Raised by the pinned lookup; the delivery records it as a refusal, not a network error. */
export class PrivateAddressError extends Error {
  readonly code = 'EWEBHOOKPRIVATE';
  constructor(host: string, address: string, setting: AllowPrivateSetting = 'WEBHOOK_ALLOW_PRIVATE') {
    super(`${host} resolved to ${address} at connection time, ${hint(setting)}`);
    this.name = 'PrivateAddressError';
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** An undici Agent whose connections go only to addresses the policy accepted in the same lookup. */
export function pinnedAgent(allowPrivate: boolean, resolve: Resolver = systemResolver, tls?: { ca?: string }, setting: AllowPrivateSetting = 'WEBHOOK_ALLOW_PRIVATE'): Agent {
  const lookup = (host: string, options: { all?: boolean; family?: number | string }, callback: LookupCallback) => {
    resolve(host).then(
      (found) => {
        const wanted = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
        const addresses = wanted ? found.filter((a) => a.family === wanted) : found;
        const bad = allowPrivate ? undefined : addresses.find((a) => isPrivateAddress(a.address));
        if (bad) return callback(new PrivateAddressError(host, bad.address, setting), '');
        const first = addresses[0];
        if (!first) return callback(Object.assign(new Error(`host ${host} does not resolve`), { code: 'ENOTFOUND' }), '');
        if (options.all) callback(null, addresses);
        else callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
  // undici takes net.connect's lookup, typed as dns.lookup's overloads; this one answers all of them.
  return new Agent({ connect: { lookup: lookup as unknown as typeof callbackLookup, ...(tls?.ca ? { ca: tls.ca } : {}) } });
}

/** One outbound request to a destination the operator names: what `fetch` takes, narrowed. */
export type OperatorFetch = (url: string, init: { method: 'POST'; headers: Record<string, string>; body: string | Uint8Array; signal: AbortSignal }) => Promise<Response>;

/**
 * Requests to the destinations the operator configures (WITNESSES, TSA_URL) under the same rule:
 * a literal private address is refused before any connection, a name is checked by the pinned
 * lookup of the connection itself, and WITNESS_ALLOW_PRIVATE lifts both. Redirects are not
 * followed (a witness or TSA answers where it is asked). A refusal is thrown as `refused: …`.
 */
export function operatorFetch(allowPrivate: boolean, resolve: Resolver = systemResolver): OperatorFetch {
  const agent = pinnedAgent(allowPrivate, resolve, undefined, 'WITNESS_ALLOW_PRIVATE');
  return async (url, init) => {
    const problem = await urlProblem(url, allowPrivate, null, 'WITNESS_ALLOW_PRIVATE');
    if (problem) throw new Error(`refused: ${url} ${problem}`);
    try {
      return (await undiciFetch(url, { ...init, redirect: 'manual', dispatcher: agent })) as unknown as Response;
    } catch (err) {
      const e = err as Error & { cause?: { code?: string; message?: string } };
      if (e.cause?.code === 'EWEBHOOKPRIVATE') throw new Error(`refused: ${e.cause.message ?? ''}`);
      throw err;
    }
  };
}
