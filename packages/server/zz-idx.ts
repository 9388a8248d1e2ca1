import path from 'node:path'; import fs from 'node:fs'; import os from 'node:os';
import { openSqliteStore } from './src/store/sqlite.js';
import { LOG_ENTRY_COLUMNS } from './src/store/columns.js';
import { uuidv7 } from './src/ledger/uuidv7.js';
import { randomUUID } from 'node:crypto';
const TR = Array.from({length:20},()=>randomUUID());
async function run(drop: string[]) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zzidx-'));
  const store = openSqliteStore(path.join(dir, 'ledger.db')); await store.migrate();
  await store.db.insertInto('companies').values({ company_id: 'c', name: 'c', created_at: 'now' } as never).execute(); await store.close();
  const SQLite = (await import('better-sqlite3')).default; const db = new SQLite(path.join(dir, 'ledger.db'));
  db.pragma('journal_mode = WAL'); db.pragma('synchronous = FULL'); db.pragma('cache_size = -65536');
  for (const d of drop) db.exec(d.startsWith('CREATE') ? d : d.startsWith('log_search') ? `DROP TRIGGER ${d}` : `DROP INDEX ${d}`);
  const insert = db.prepare(`INSERT INTO log_entries (${LOG_ENTRY_COLUMNS.join(', ')}) VALUES (${LOG_ENTRY_COLUMNS.map((c) => `@${c}`).join(', ')})`);
  const NULL_ROW = Object.fromEntries(LOG_ENTRY_COLUMNS.map((c) => [c, null]));
  const tx = db.transaction((start: number) => { for (let i = start; i < start + 1000; i++) insert.run({ ...NULL_ROW, company_id: 'c', seq: i, log_id: uuidv7(Date.now()), format_version: 2, event_type: 'tool.called', data: JSON.stringify({ tool: 'search', query: 'q'.repeat(330), k: 5, user: `u-${i}`, ok: true }), content_commitment: 'd'.repeat(64), content_salt: 'e'.repeat(44), source: 'bench-agent', trace_id: TR[Math.floor(i/50)%20], created_at: new Date().toISOString(), prev_hash: 'a'.repeat(64), hash: 'b'.repeat(64), signature: 'c'.repeat(88), key_id: '0123456789abcdef' }); });
  let n = 0; const t = performance.now(); while (performance.now() - t < 4000) { tx(n); n += 1000; }
  const r = n / ((performance.now() - t) / 1000); db.close(); fs.rmSync(dir, { recursive: true }); return r;
}
const idx = (await (async()=>{const dir=fs.mkdtempSync('/tmp/zz');const s=openSqliteStore(dir+'/l.db');await s.migrate();const SQLite=(await import('better-sqlite3')).default;const db=new SQLite(dir+'/l.db');const r=db.prepare("select name, sql from sqlite_master where tbl_name='log_entries'").all();db.close();await s.close();return r;})());
console.log(idx);
const C='CREATE INDEX log_entries_created_at_idx ON log_entries (company_id, created_at, seq)';
const cases: Record<string,string[]> = { 'before (with created_at)': [C], now: [], '-fts': ['log_search_insert'], 'before -fts': ['log_search_insert', C], '-fts -source -event_type': ['log_search_insert','log_entries_source_idx','log_entries_event_type_idx'] };
const res: Record<string, number[]> = {};
for (let k=0;k<3;k++) for (const [n,d] of Object.entries(cases)) (res[n] ??= []).push(Math.round(await run(d)));
for (const [n,v] of Object.entries(res)) console.log(n.padEnd(40), v.join(' '), 'median', v.sort((a,b)=>a-b)[1]);
