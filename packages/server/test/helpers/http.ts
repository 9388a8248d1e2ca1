// Plain HTTP against a service started as a child process (keep-alive, any body).
import http from 'node:http';

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: () => any; // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON answers of a black-box test
}

export function call(url: string, method: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
    const req = http.request(url, { method, agent, headers: { ...(payload !== undefined ? { 'content-type': 'application/json' } : {}), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, json: () => JSON.parse(text) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    // A service that stops answering fails the test with this, instead of hanging it.
    req.setTimeout(60_000, () => req.destroy(new Error(`no answer from ${method} ${url} within 60 s`)));
    req.end(payload);
  });
}

/** GET of a path exactly as written (options, not a URL string: a URL would be normalized, /console/../x to /x, before it is sent). */
export function getRawPath(base: string, rawPath: string): Promise<{ status: number; body: string }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    http
      .get({ host: u.hostname, port: u.port, path: rawPath, agent: false }, (r) => {
        let body = '';
        r.on('data', (c: Buffer) => (body += c.toString()));
        r.on('end', () => resolve({ status: r.statusCode as number, body }));
      })
      .on('error', reject);
  });
}
