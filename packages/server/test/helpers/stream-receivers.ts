// Receivers for the log stream suites, on loopback, each following its protocol's rules for
// what counts as received: Splunk's HTTP Event Collector (token, channel header, ackId, and an
// acknowledgement endpoint that says "not yet" first), Datadog's logs intake (DD-API-KEY, a JSON
// array of at most 1000 logs, 202), and a generic NDJSON receiver (2xx) that can be told to fail.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Got {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

async function listen(handle: (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void) {
  const got: Got[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      got.push({ path: req.url ?? '', headers: req.headers, body });
      handle(req, body, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    got,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Answers each batch with the next scripted status, with headers when given (then 200). Lines: every NDJSON line received. */
export async function ndjsonReceiver() {
  const script: Array<number | { status: number; headers: Record<string, string> }> = [];
  const s = await listen((_req, _body, res) => {
    const next = script.shift() ?? 200;
    void (typeof next === 'number' ? res.writeHead(next) : res.writeHead(next.status, next.headers)).end();
  });
  return { ...s, url: `${s.base}/ingest`, script, lines: () => s.got.filter((g) => g.body).flatMap((g) => g.body.split('\n').filter(Boolean)) };
}

/** Splunk HEC with indexer acknowledgement: each event batch gets an ackId, acknowledged at the second poll. */
export async function splunkReceiver(token: string) {
  let nextAck = 0;
  const polls = new Map<number, number>();
  const events: Array<{ channel: string; ackId: number; items: Array<Record<string, unknown>> }> = [];
  const s = await listen((req, body, res) => {
    const json = (status: number, v: unknown) => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(v));
    if (req.headers.authorization !== `Splunk ${token}`) return json(401, { text: 'Invalid authorization', code: 3 });
    const channel = req.headers['x-splunk-request-channel'];
    if (typeof channel !== 'string') return json(400, { text: 'Data channel is missing', code: 10 });
    if (req.url === '/services/collector/event') {
      // Concatenated JSON objects, one event each (what HEC accepts).
      const items = body.split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      if (items.some((i) => i.event === undefined)) return json(400, { text: 'Event field is required', code: 12 });
      const ackId = nextAck++;
      events.push({ channel, ackId, items });
      return json(200, { text: 'Success', code: 0, ackId });
    }
    if (req.url?.startsWith('/services/collector/ack')) {
      const { acks } = JSON.parse(body) as { acks: number[] };
      const out: Record<string, boolean> = {};
      for (const id of acks) {
        const n = (polls.get(id) ?? 0) + 1;
        polls.set(id, n);
        out[String(id)] = n >= 2;
      }
      return json(200, { acks: out });
    }
    return json(404, { text: 'not found', code: 404 });
  });
  return { ...s, url: s.base, events, polls };
}

/** Datadog's logs intake: DD-API-KEY, a JSON array of at most 1000 logs, answered 202. */
export async function datadogReceiver(apiKey: string) {
  const logs: Array<{ ddsource: string; service: string; message: string; hostname: string }> = [];
  const s = await listen((req, body, res) => {
    if (req.headers['dd-api-key'] !== apiKey) return void res.writeHead(403).end('{"errors":["Forbidden"]}');
    const items = JSON.parse(body) as typeof logs;
    if (!Array.isArray(items) || items.length > 1000) return void res.writeHead(400).end();
    logs.push(...items);
    res.writeHead(202, { 'content-type': 'application/json' }).end('{}');
  });
  return { ...s, url: `${s.base}/api/v2/logs`, logs };
}
