// Ceiling for single-event ingestion: a bare Fastify route that parses the same JSON body
// and answers, with nothing else (no auth, no validation, no store).
import Fastify from 'fastify';

const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
app.post('/api/v1/logs', async (request) => {
  const body = request.body as { event_type?: string };
  return { log_id: '00000000-0000-7000-8000-000000000000', event_type: body.event_type ?? null, seq: 0 };
});
const url = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(JSON.stringify({ msg: 'bare listening', url }) + '\n');
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
