// Exports and evidence bundles, made by the service and verified by the real
// `audit-ledger verify-bundle` process with no database configured. Both stores.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyIdOf, parseNote, toBase64 } from '@audit-ledger/core';
import { rawPublicKey, signEntryHash, signNote } from '../src/crypto/signing.js';
import { memoryCustody } from '../src/crypto/custody.js';
import { LOG_ENTRY_COLUMNS } from '../src/store/columns.js';
import { STORE_KINDS } from './helpers/env.js';
import { problem, startTestApp, type TestApp } from './helpers/app.js';
import { ingestBatch } from './helpers/ledger.js';
import { runCli } from './helpers/process.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'audit-ledger-evidence-'));
const write = (name: string, content: string) => {
  const f = path.join(tmp, `${randomUUID()}-${name}`);
  fs.writeFileSync(f, content);
  return f;
};
/** The CLI with no database and a data dir that must stay untouched. */
async function verifyBundle(args: string[]) {
  const dataDir = path.join(tmp, `never-created-${randomUUID()}`);
  const r = await runCli(['verify-bundle', ...args], { LEDGER_DATA_DIR: dataDir });
  expect(fs.existsSync(dataDir)).toBe(false);
  return r;
}

describe.each(STORE_KINDS)('exports and evidence on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind, { env: { CHECKPOINT_INTERVAL_MS: '0', INTEGRITY_VERIFY_INTERVAL_SECONDS: '0' } });
  });
  afterAll(() => t.close());

  async function company() {
    const acct = await t.newAccount();
    const { key } = await t.createKey(acct.token, 1_000_000);
    const trace = randomUUID();
    const logs = Array.from({ length: 40 }, (_, i) => ({
      event_type: i % 3 === 0 ? 'tool.called' : 'llm.call',
      // Entry 7 holds U+2028, U+2029 and a CR raw: valid JSON the export writes as it is (JSON Lines splits on LF only).
      data: { i, note: i === 5 ? 'comma, "quote"\nnewline' : i === 7 ? 'line\u2028separator\u2029paragraph\rreturn' : `n${i}` },
      ...(i % 4 === 0 ? { trace_id: trace } : {}),
    }));
    const ids: string[] = (await ingestBatch(t, key, logs)).json().log_ids;
    const get = (url: string, headers: Record<string, string> = {}) => t.inject({ method: 'GET', url, headers: { 'x-api-key': key, ...headers } });
    const keysJson = (await t.inject({ method: 'GET', url: '/api/v1/integrity/keys' })).body;
    const pem = (JSON.parse(keysJson).items as Array<{ public_key_pem: string }>).map((k) => k.public_key_pem).join('');
    return { acct, key, trace, ids, get, keysFile: write('keys.json', keysJson), pemFile: write('key.pem', pem) };
  }

  it('a bundle for a trace verifies offline; one changed byte or a foreign checkpoint signature fails, naming what failed', async () => {
    const c = await company();
    const res = await c.get(`/api/v1/exports/evidence?trace_id=${c.trace}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-disposition']).toContain('attachment');
    const bundle = res.json();
    expect(bundle).toMatchObject({ format: 'audit-ledger/evidence-bundle/v1', company_id: c.acct.companyId, selection: { trace_id: c.trace }, entries_after_checkpoint: 0 });
    expect(bundle.entries.map((e: { entry: { seq: number } }) => e.entry.seq)).toEqual([0, 4, 8, 12, 16, 20, 24, 28, 32, 36]);
    expect(bundle.checkpoint.tree_size).toBe(40);

    const good = await verifyBundle([write('bundle.json', JSON.stringify(bundle)), '--public-key', c.pemFile]);
    expect(good.stdout).toContain('VERIFIED: every check holds');
    expect(good.stdout).toContain('OK   10 entries');
    expect(good.code).toBe(0);

    // One byte of one entry: "n8" → "n9".
    const text = JSON.stringify(bundle);
    const changed = text.replace('"note":"n8"', '"note":"n9"');
    expect(changed).not.toBe(text);
    const bad = await verifyBundle([write('bundle.json', changed), '--public-key', c.keysFile]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain(`FAIL entry seq 8 (log_id ${c.ids[8]}): content does not match its commitment`);
    expect(bad.stdout).toContain('NOT VERIFIED');

    // The same checkpoint text, signed by a key the auditor does not trust.
    const other = generateKeyPairSync('ed25519');
    const forged = structuredClone(bundle);
    forged.checkpoint.note = signNote(parseNote(bundle.checkpoint.note).text, t.config.ledgerOrigin, memoryCustody(other.privateKey), rawPublicKey(other.publicKey));
    const foreign = await verifyBundle([write('bundle.json', JSON.stringify(forged)), '--public-key', c.pemFile]);
    expect(foreign.code).toBe(1);
    expect(foreign.stdout).toContain('FAIL checkpoint signature does not verify with any trusted key');

    // Without --public-key: consistent, but never VERIFIED, and a distinct exit status.
    const selfKeyed = await verifyBundle([write('bundle.json', JSON.stringify(bundle))]);
    expect(selfKeyed.code).toBe(3);
    expect(selfKeyed.stdout).toContain('NOTE no --public-key given');
    expect(selfKeyed.stdout).toContain('UNVERIFIED (signer not pinned)');
    expect(selfKeyed.stdout).not.toMatch(/^VERIFIED/m);

    // A forgery: every entry and the checkpoint re-signed with an attacker's key, which the bundle carries.
    const attacker = generateKeyPairSync('ed25519');
    const attackerRaw = rawPublicKey(attacker.publicKey);
    const attackerId = keyIdOf(attackerRaw);
    const fake = structuredClone(bundle);
    for (const item of fake.entries) {
      item.entry.key_id = attackerId;
      item.entry.signature = signEntryHash(attacker.privateKey, item.entry.hash);
    }
    fake.checkpoint.note = signNote(parseNote(bundle.checkpoint.note).text, t.config.ledgerOrigin, memoryCustody(attacker.privateKey), attackerRaw);
    fake.public_keys = [{ ...bundle.public_keys[0], key_id: attackerId, public_key: toBase64(attackerRaw) }];
    const unpinned = await verifyBundle([write('bundle.json', JSON.stringify(fake))]);
    expect(unpinned.code).toBe(3);
    expect(unpinned.stdout).toContain('UNVERIFIED (signer not pinned)');
    const pinned = await verifyBundle([write('bundle.json', JSON.stringify(fake)), '--public-key', c.pemFile]);
    expect(pinned.code).toBe(1);
    expect(pinned.stdout).toContain('NOT VERIFIED');

    // The checkpoint's JSON fields are unsigned: a change to them is a failure, never believed.
    const moved = structuredClone(bundle);
    moved.checkpoint.tree_size = 39;
    const movedRun = await verifyBundle([write('bundle.json', JSON.stringify(moved)), '--public-key', c.pemFile]);
    expect(movedRun.code).toBe(1);
    expect(movedRun.stdout).toContain('checkpoint JSON fields differ from the signed note: tree_size 39 (signed: 40)');
  });

  it('a bundle by seq range verifies; a swapped inclusion proof fails', async () => {
    const c = await company();
    const bundle = (await c.get('/api/v1/exports/evidence?from_seq=10&to_seq=19')).json();
    expect(bundle.entries).toHaveLength(10);
    expect((await verifyBundle([write('b.json', JSON.stringify(bundle)), '--public-key', c.pemFile])).code).toBe(0);
    // One entry is "1 entry".
    const one = (await c.get('/api/v1/exports/evidence?from_seq=7&to_seq=7')).json();
    expect((await verifyBundle([write('b1.json', JSON.stringify(one)), '--public-key', c.pemFile])).stdout).toContain('OK   1 entry: every hash');
    const swapped = structuredClone(bundle);
    swapped.entries[3].inclusion_proof.proof = bundle.entries[4].inclusion_proof.proof;
    const r = await verifyBundle([write('b.json', JSON.stringify(swapped)), '--public-key', c.pemFile]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('FAIL entry seq 13');
    expect(r.stdout).toContain('inclusion proof does not lead to the checkpoint root');
    // The range says what must be there: an entry taken out of it fails, naming the seq.
    const holed = structuredClone(bundle);
    holed.entries.splice(4, 1);
    const h = await verifyBundle([write('b.json', JSON.stringify(holed)), '--public-key', c.pemFile]);
    expect(h.code).toBe(1);
    expect(h.stdout).toContain('lacks seq 14');
  });

  it('an export checks every idempotency_conflict_of mark against the chain\'s keys: a removed, added or changed mark fails', async () => {
    const c = await company();
    const first = (await ingestBatch(t, c.key, [{ event_type: 'order.placed', data: { n: 1 }, idempotency_key: 'order-77' }])).json().log_ids[0];
    const again = await ingestBatch(t, c.key, [{ event_type: 'order.placed', data: { n: 2 }, idempotency_key: 'order-77' }]);
    const conflict = again.json().log_ids[0];
    const text = (await c.get('/api/v1/exports/logs?format=jsonl')).body;
    const checkpoint = write('cp.json', (await c.get('/api/v1/integrity/checkpoint')).body);
    const lines = text.trimEnd().split('\n');
    const at = lines.findIndex((l) => l.includes(`"log_id":"${conflict}"`));
    expect(JSON.parse(lines[at] as string).idempotency_conflict_of).toBe(first);
    expect((await verifyBundle([write('export.jsonl', text), '--checkpoint', checkpoint, '--public-key', c.pemFile])).code).toBe(0);
    const edit = (i: number, mark: string | null) => lines.map((l, j) => (j === i ? JSON.stringify({ ...JSON.parse(l), idempotency_conflict_of: mark }) : l)).join('\n');
    for (const [i, mark] of [[at, null], [at, c.ids[0] as string], [0, first]] as const) {
      const r = await verifyBundle([write('export.jsonl', edit(i, mark)), '--checkpoint', checkpoint, '--public-key', c.pemFile]);
      expect(r.code, `line ${i} marked ${mark}`).toBe(1);
      expect(r.stdout).toContain('idempotency_conflict_of is');
    }
  });

  it('a complete JSON Lines export verifies against a checkpoint; a changed or missing line fails', async () => {
    const c = await company();
    const res = await c.get('/api/v1/exports/logs?format=jsonl');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const lines = res.body.trimEnd().split('\n');
    // The 40 events, then the export's own export.generated entry (who exported what, and when).
    expect(lines).toHaveLength(41);
    expect(JSON.parse(lines[40] as string)).toMatchObject({ seq: 40, event_type: 'export.generated', source: 'audit-ledger/admin', data: { format: 'jsonl', actor: { kind: 'api_key' } } });
    expect(JSON.parse(lines[5] as string)).toMatchObject({ seq: 5, log_id: c.ids[5], data: { i: 5, note: 'comma, "quote"\nnewline' }, signature: expect.any(String) });
    const checkpoint = write('cp.json', (await c.get('/api/v1/integrity/checkpoint')).body);
    const note = write('cp.txt', (await c.get('/api/v1/integrity/checkpoint', { accept: 'text/plain' })).body);

    expect(res.body).toContain('line\u2028separator\u2029paragraph');
    const ok = await verifyBundle([write('export.jsonl', res.body), '--checkpoint', checkpoint, '--public-key', c.keysFile]);
    expect(ok.stdout).toContain('OK   41 entries');
    expect(ok.code).toBe(0);
    expect((await verifyBundle([write('export.jsonl', res.body), '--checkpoint', note, '--public-key', c.pemFile])).code).toBe(0);
    // A checkpoint JSON whose unsigned fields were changed while the signed note was not: fails.
    for (const edit of [{ root_hash: 'ab'.repeat(32) }, { tree_size: 30 }]) {
      const cpEdited = write('cp-edited.json', JSON.stringify({ ...JSON.parse(fs.readFileSync(checkpoint, 'utf8')), ...edit }));
      const edited = await verifyBundle([write('export.jsonl', res.body), '--checkpoint', cpEdited, '--public-key', c.pemFile]);
      expect(edited.code).toBe(1);
      expect(edited.stdout).toContain('checkpoint JSON fields differ from the signed note');
    }

    const changed = res.body.replace('"event_type":"llm.call"', '"event_type":"llm.calls"');
    const bad = await verifyBundle([write('export.jsonl', changed), '--checkpoint', checkpoint, '--public-key', c.pemFile]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain(`FAIL entry seq 1 (log_id ${c.ids[1]}): hash mismatch`);

    const missing = lines.filter((_, i) => i !== 20).join('\n');
    const gap = await verifyBundle([write('export.jsonl', missing), '--checkpoint', checkpoint, '--public-key', c.pemFile]);
    expect(gap.code).toBe(1);
    expect(gap.stdout).toContain('expected seq 20, found 21');

    const truncated = lines.slice(0, 30).join('\n');
    const short = await verifyBundle([write('export.jsonl', truncated), '--checkpoint', checkpoint, '--public-key', c.pemFile]);
    expect(short.code).toBe(1);
    expect(short.stdout).toContain('the export holds 30 entries but the checkpoint covers 41');

    const usage = await verifyBundle([write('export.jsonl', res.body), '--checkpoint', checkpoint]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('needs --public-key');
  });

  it('CSV export: header, one row per entry, RFC 4180 quoting, values exactly as stored', async () => {
    const c = await company();
    const res = await c.get('/api/v1/exports/logs?format=csv&event_type=tool.called');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    const rows = res.body.split('\r\n').filter(Boolean);
    expect(rows[0]).toBe(LOG_ENTRY_COLUMNS.join(','));
    expect(rows).toHaveLength(1 + 14);
    const all = (await c.get('/api/v1/exports/logs?format=csv')).body;
    expect(all).toContain('"{""i"":5,""note"":""comma, \\""quote\\""\\nnewline""}"');
  });

  it('CSV neutralises cells a spreadsheet would run as formulas; JSON Lines keeps them exactly', async () => {
    const c = await company();
    const sent = { event_type: '=HYPERLINK("http://evil.test","x")', data: { a: 1 }, source: '+cmd|calc', agent_id: '@SUM(A1)', workflow_id: '-2+3' };
    expect((await t.inject({ method: 'POST', url: '/api/v1/logs', headers: { 'x-api-key': c.key }, payload: sent })).statusCode).toBe(200);
    const csv = (await c.get('/api/v1/exports/logs?format=csv&event_type=' + encodeURIComponent(sent.event_type))).body.split('\r\n')[1] as string;
    expect(csv).toContain(`"'=HYPERLINK(""http://evil.test"",""x"")"`);
    for (const v of ["'+cmd|calc", "'@SUM(A1)", "'-2+3"]) expect(csv.split(',')).toContain(v);
    const jsonl = JSON.parse((await c.get('/api/v1/exports/logs?event_type=' + encodeURIComponent(sent.event_type))).body);
    expect(jsonl).toMatchObject(sent);
  });

  it('export filters by trace, event type and time, and never crosses companies', async () => {
    const a = await company();
    const b = await company();
    const byTrace = (await a.get(`/api/v1/exports/logs?trace_id=${a.trace}`)).body.trimEnd().split('\n');
    expect(byTrace.map((l) => JSON.parse(l).seq)).toEqual([0, 4, 8, 12, 16, 20, 24, 28, 32, 36]);
    expect((await b.get(`/api/v1/exports/logs?trace_id=${a.trace}`)).body).toBe('');
    const bAll = (await b.get('/api/v1/exports/logs')).body.trimEnd().split('\n');
    expect(bAll.every((l) => JSON.parse(l).company_id === b.acct.companyId)).toBe(true);
    expect((await a.get('/api/v1/exports/logs?to=2000-01-01T00:00:00Z')).body).toBe('');
    problem(await a.get('/api/v1/exports/logs?format=xml'), 400, 'validation_failed');
    problem(await a.get('/api/v1/exports/logs?trace_id=nope'), 400, 'validation_failed');
    problem(await a.get('/api/v1/exports/logs?from=yesterday'), 400, 'validation_failed');
    problem(await t.inject({ method: 'GET', url: '/api/v1/exports/logs' }), 401, 'missing_credential');
  });

  it('evidence requests that cannot be answered get clear problems', async () => {
    const a = await company();
    const b = await company();
    problem(await a.get('/api/v1/exports/evidence'), 400, 'validation_failed');
    problem(await a.get(`/api/v1/exports/evidence?trace_id=${a.trace}&from_seq=0&to_seq=1`), 400, 'validation_failed');
    problem(await a.get('/api/v1/exports/evidence?from_seq=3'), 400, 'validation_failed');
    problem(await a.get('/api/v1/exports/evidence?from_seq=5&to_seq=4'), 400, 'validation_failed');
    problem(await a.get('/api/v1/exports/evidence?from_seq=0&to_seq=10000'), 400, 'validation_failed');
    problem(await a.get('/api/v1/exports/evidence?from_seq=100&to_seq=200'), 404, 'not_found');
    problem(await a.get(`/api/v1/exports/evidence?trace_id=${randomUUID()}`), 404, 'not_found');
    problem(await b.get(`/api/v1/exports/evidence?trace_id=${a.trace}`), 404, 'not_found');
  });
});

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
