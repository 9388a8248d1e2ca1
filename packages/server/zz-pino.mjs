import pino from 'pino';
import fs from 'node:fs';
const min = Number(process.argv[2]);
const fd = fs.openSync('/tmp/zzpino.log', 'w');
const d = pino.destination({ dest: fd, sync: false, maxLength: 64 * 1024 * 1024, minLength: min });
const log = pino({ redact: { paths: ['req.headers.authorization'], censor: '[redacted]' } }, d).child({ reqId: 'abc' });
const N = 100000;
const t0 = process.cpuUsage(); const w0 = performance.now();
let i = 0;
await new Promise((resolve) => {
  const step = () => { for (let k = 0; k < 50 && i < N; k++, i++) log.info({ method: 'POST', route: '/api/v1/logs', status: 200, latency_ms: 1.23, company_id: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b' }, 'request completed'); if (i < N) setImmediate(step); else resolve(); };
  step();
});
d.flushSync();
const c = process.cpuUsage(t0);
console.log(`minLength ${min}: ${((c.user + c.system) / N).toFixed(2)} µs CPU per line (wall ${((performance.now() - w0) * 1000 / N).toFixed(2)})`);
