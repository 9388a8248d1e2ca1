// A body a route sends as it is, under its own content type, which the route's JSON response
// schema does not describe: a PDF, a text/plain checkpoint note or Mermaid graph, the Prometheus
// text, a streamed export. Fastify serializes only JSON through the schema, and its type provider
// types `reply.send` from that schema alone; this is the one place such a body is let through
// (the lint forbids casting to never anywhere else).
import type { Readable } from 'node:stream';

export function rawBody<T>(body: string | Uint8Array | Readable): T {
  return body as unknown as T;
}
