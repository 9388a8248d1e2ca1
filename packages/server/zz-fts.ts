import Database from 'better-sqlite3';
const VOCAB = Array.from({ length: 5000 }, (_, i) => (i * 2654435761 % 4294967296).toString(36).slice(0, 3 + (i % 7)));
let seed = 1; const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const text = (n: number) => { let t = ''; while (t.length < n) t += VOCAB[Math.floor(rnd() * 5000)] + ' '; return t.slice(0, n); };
const data = (i: number) => JSON.stringify({ ok: true, passage: text(3950), query: 'what is the refund policy for orders over 100 euros', tool: 'retrieve', user: `u-${i}` });
function run(opts: string) {
  const db = new Database(':memory:');
  db.exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, data TEXT)`);
  db.exec(`CREATE VIRTUAL TABLE s USING fts5(data, content='t', content_rowid='id', ${opts.includes('tokenize') ? '' : ", tokenize='unicode61'"}${opts})`);
  db.exec(`INSERT INTO s(s, rank) VALUES ('secure-delete', 1)`);
  db.exec(`CREATE TRIGGER ti AFTER INSERT ON t BEGIN INSERT INTO s(rowid, data) VALUES (new.id, new.data); END`);
  const ins = db.prepare('INSERT INTO t (id, data) VALUES (?, ?)');
  const tx = db.transaction((s: number) => { for (let i = s; i < s + 1000; i++) ins.run(i, data(i)); });
  let n = 0; const t = performance.now(); while (performance.now() - t < 3000) { tx(n); n += 1000; }
  const us = (performance.now() - t) * 1000 / n;
  let q = '';
  try { q = JSON.stringify(db.prepare(`SELECT count(*) c FROM s WHERE s MATCH ?`).get('"u-12" AND "refund"*')); } catch (e) { q = String(e); }
  return `${us.toFixed(1)} µs/row; phrase query: ${q}`;
}
const base = (() => { const db = new Database(':memory:'); db.exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, data TEXT)`); const ins = db.prepare('INSERT INTO t (id, data) VALUES (?, ?)'); const tx = db.transaction((s: number) => { for (let i = s; i < s + 1000; i++) ins.run(i, data(i)); }); let n = 0; const t = performance.now(); while (performance.now() - t < 3000) { tx(n); n += 1000; } return ((performance.now() - t) * 1000 / n).toFixed(1); })();
console.log('no fts', base);
for (const o of ["", ", detail=column", ", detail=none", ", detail=none, columnsize=0"]) console.log(o || 'default', run(o));
