// A full verification in worker threads (VERIFY_WORKERS, segments joined in order) must find
// exactly what one scanner over the same pages finds: the same violations, counts and end state,
// on a clean ledger and on one damaged in several segments. Both stores.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { contentCommitment, contentText, entryHash, recordToEntry, SCAN_START, Scanner, type ScanViolation, SEGMENT_SIZE, storedHashIndex } from '@audit-ledger/core';
import { readScanPage } from '../src/integrity/scan-pages.js';
import { STORE_KINDS } from './helpers/env.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ingestBatch } from './helpers/ledger.js';

const N = 2 * SEGMENT_SIZE + 900; // two full segments (so a tree level above a segment) and a partial one

describe.each(STORE_KINDS)('parallel full verification on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind, { env: { CHECKPOINT_INTERVAL_MS: '0', INTEGRITY_VERIFY_INTERVAL_SECONDS: '0', VERIFY_WORKERS: '2' } });
  }, 120_000);
  afterAll(() => t.close());

  async function ledger() {
    const acct = await t.newAccount();
    const { key } = await t.createKey(acct.token, 1_000_000);
    // Batches of 700: checkpoints fall inside segments, not only at their ends.
    for (let i = 0; i < N; i += 700) {
      const res = await ingestBatch(t, key, Array.from({ length: Math.min(700, N - i) }, (_, j) => ({ event_type: 'step', data: { i: i + j } })));
      expect(res.statusCode, res.body).toBe(200);
    }
    const c = acct.companyId;
    const req = (method: 'GET' | 'POST', url: string, payload?: object) => t.inject({ method, url, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) });
    const parallel = async () => {
      const res = await req('POST', '/api/v1/integrity/verify', {});
      expect(res.statusCode, res.body).toBe(202);
      let job = res.json();
      await vi.waitFor(
        async () => {
          job = (await req('GET', `/api/v1/integrity/jobs/${job.job_id}`)).json();
          expect(job.status, JSON.stringify(job).slice(0, 600)).toBe('completed');
        },
        { timeout: 20_000, interval: 50 },
      );
      return job.report as { violations: ScanViolation[]; violation_count: number; entries_checked: number; tree_hashes_checked: number; checkpoints_checked: number; tree_size: number };
    };
    /** One scanner on this thread over the same entries. */
    const sequential = async (size: number) => {
      const scanner = new Scanner(SCAN_START, { keyName: t.config.ledgerOrigin, publicKeys: await publicKeys(), entrySignatures: false });
      const violations: ScanViolation[] = [];
      for (let a = 0; a < size; a += SEGMENT_SIZE) violations.push(...scanner.scanPage((await readScanPage(t.store, c, a, Math.min(size, a + SEGMENT_SIZE))).page));
      return { violations, counts: scanner.counts };
    };
    const publicKeys = async () => {
      const { rawKeyFromBase64 } = await import('@audit-ledger/core');
      return new Map((await t.store.signingKeys.list()).map((k) => [k.key_id, rawKeyFromBase64(k.public_key)]));
    };
    const row = (seq: number) => t.store.db.selectFrom('log_entries').selectAll().where('company_id', '=', c).where('seq', '=', seq).executeTakeFirstOrThrow();
    return { c, parallel, sequential, row };
  }

  const sameOrder = (v: ScanViolation[]) => [...v].sort((a, b) => (a.seq ?? -1) - (b.seq ?? -1) || a.kind.localeCompare(b.kind) || a.detail.localeCompare(b.detail));

  it('a clean ledger: valid, with the counts one scanner gives', async () => {
    const l = await ledger();
    const report = await l.parallel();
    const seq = await l.sequential(report.tree_size);
    expect(report.tree_size).toBe(N + 1); // and the admin entry recording the request
    expect(report.violations).toEqual([]);
    expect({ entries: report.entries_checked, treeHashes: report.tree_hashes_checked, checkpoints: report.checkpoints_checked }).toEqual({
      entries: seq.counts.entries,
      treeHashes: seq.counts.treeHashes,
      checkpoints: seq.counts.checkpoints,
    });
  });

  it('damage in every segment and above them: the same violations as one scanner', async () => {
    const l = await ledger();
    const sql = t.store.db;
    // Segment 0: changed content.
    await sql.updateTable('log_entries').set({ data: '{"i":-1}' }).where('company_id', '=', l.c).where('seq', '=', 100).execute();
    // Segment 1: an entry rewritten with its hash recomputed (the tree and later checkpoint roots no longer match).
    const r = await l.row(2100);
    const data = '{"i":-2}';
    const forged = { ...r, data, content_commitment: contentCommitment(Buffer.from(r.content_salt as string, 'base64'), contentText(data, null)) };
    await sql.updateTable('log_entries').set({ data, content_commitment: forged.content_commitment, hash: entryHash(recordToEntry(forged)) }).where('company_id', '=', l.c).where('seq', '=', 2100).execute();
    // Above the segments: the level-12 node over entries 0–4095, completed by the last entry of segment 1.
    await sql.updateTable('merkle_hashes').set({ hash: 'cd'.repeat(32) }).where('company_id', '=', l.c).where('idx', '=', storedHashIndex(12, 0)).execute();
    // Segment 2 (partial): a deleted entry; and the first entry of segment 1 no longer links.
    await sql.deleteFrom('log_entries').where('company_id', '=', l.c).where('seq', '=', 4500).execute();
    await sql.updateTable('log_entries').set({ prev_hash: 'ef'.repeat(32) }).where('company_id', '=', l.c).where('seq', '=', SEGMENT_SIZE).execute();

    const report = await l.parallel();
    const seq = await l.sequential(report.tree_size);
    const kinds = new Set(report.violations.map((v) => v.kind));
    expect(kinds).toEqual(new Set(['content_mismatch', 'merkle_mismatch', 'broken_link', 'missing_entry', 'checkpoint_inconsistent', 'hash_mismatch']));
    expect(report.violations.some((v) => v.detail.includes(`stored tree hash ${storedHashIndex(12, 0)} (level 12`))).toBe(true);
    expect(sameOrder(report.violations)).toEqual(sameOrder(seq.violations));
    expect(report.violation_count).toBe(seq.violations.length);
    expect(report.entries_checked).toBe(seq.counts.entries);
    expect(report.tree_hashes_checked).toBe(seq.counts.treeHashes);
  });
});
