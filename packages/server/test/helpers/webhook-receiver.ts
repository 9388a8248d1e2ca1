// A webhook receiver on loopback for the webhook suites: it answers each request with the next
// scripted behaviour (a status, or 'hang'), then 200; and the Standard Webhooks signature check,
// written from the specification.
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A receiver that answers each request with the next scripted behaviour (then 200). */
export async function receiver() {
  const got: Received[] = [];
  const script: Array<number | 'hang'> = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      got.push({ headers: req.headers, body });
      const next = script.shift() ?? 200;
      if (next === 'hang') {
        hanging.add(res);
        return;
      }
      res.writeHead(next, next === 429 ? { 'retry-after': '600' } : {}).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    got,
    script,
    close: () =>
      new Promise<void>((r) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** The Standard Webhooks verification, written from the specification. */
export function verifySignature(secret: string, r: Received): boolean {
  const id = r.headers['webhook-id'] as string;
  const ts = r.headers['webhook-timestamp'] as string;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${ts}.${r.body}`).digest('base64');
  return (r.headers['webhook-signature'] as string).split(' ').some((s) => s === `v1,${expected}`);
}
