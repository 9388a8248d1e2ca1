// The URL gets the same text rule as bodies (json-body.ts): percent-encoding must decode to
// UTF-8, and no U+0000. Query values reach SQL filters (PostgreSQL text cannot hold U+0000, and
// a 500 there was once the answer); an invalid sequence would otherwise be read as something
// other than what was sent. Checked only for URLs that hold a '%', before routing.
import type { FastifyInstance } from 'fastify';
import { sendProblem } from './problems.js';

/** Why this raw URL's text is refused, or null. */
export function urlTextProblem(url: string): string | null {
  if (!url.includes('%')) return null;
  for (const part of url.split(/[?&=/]/)) {
    if (!part.includes('%')) continue;
    let decoded: string;
    try {
      decoded = decodeURIComponent(part.replace(/\+/g, ' '));
    } catch {
      return `the URL holds "${part.slice(0, 40)}", which is not percent-encoded UTF-8`;
    }
    if (decoded.includes('\u0000')) return 'the URL holds U+0000 (%00), which is not accepted';
  }
  return null;
}

export function registerUrlTextCheck(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    const problem = urlTextProblem(request.raw.url ?? '');
    if (problem) return void sendProblem(request, reply, 400, 'invalid_text', problem);
    done();
  });
}
