import { fullVerification } from './bench/integrity.js';
import { cleanUp } from './bench/scratch.js';
const n = Number(process.argv[2] ?? 200000);
const r = await fullVerification(n, (i: number) => ({ event_type: 'tool.called', source: 'bench-agent', trace_id: '7d444840-9dc0-11d1-b245-5ffdce74fad2', data: { tool: 'search', query: 'q'.repeat(330), k: 5, user: `u-${i}`, ok: true } }));
console.log(process.env.AUDIT_LEDGER_ED25519 ?? 'default', 'plain', (r.report.duration_ms / 1000).toFixed(1), 's; signatures', (r.signed.duration_ms / 1000).toFixed(1), 's;', r.signed.signatures_checked, 'checked', r.signed.violation_count, 'violations');
await cleanUp();
