// `audit-ledger continuity`: what the start-up check holds (guard.ts), and the operator's decision
// for a held company: supply the missing entries (verified as a restore verifies them, against the
// checkpoint seen when it had its note, then appended exactly as exported), or accept their loss
// (the service records it in the company's chain and appends again; the witnesses will refuse the
// checkpoints that follow, since they no longer extend what they cosigned).
import { entriesOf, jsonLines } from '../exports/formats.js';
import { iso } from '../kernel/time.js';
import type { Store } from '../store/store.js';
import { SIGNATURE_ALGORITHM } from '@audit-ledger/core';
import { appendLines, rotationsIn, verifyCompany } from './restore.js';
import { RestoreInputError, suppliedEntries, trustOf } from './sources.js';

export async function continuityStatus(store: Store): Promise<string[]> {
  const rows = await store.continuityHolds.all();
  if (rows.length === 0) return ['no continuity hold: every company may append'];
  return rows.map(
    (h) =>
      `company ${h.company_id}: stored ${h.stored_size} entries, seen ${h.seen_size} (${h.source}) at ${h.detected_at}: ` +
      (h.decision === null ? `HOLDING (entries seq ${h.stored_size} to ${h.seen_size - 1} missing)` : `${h.decision} at ${h.decided_at}${h.reason ? ` (${h.reason})` : ''}`),
  );
}

export async function acceptLoss(store: Store, companyId: string, reason: string): Promise<number> {
  return store.continuityHolds.decide(companyId, 'loss_accepted', reason, iso(Date.now()));
}

/** Verifies and appends the supplied entries of a held company; lifts its hold when they reach every size seen. */
export async function supplyEntries(store: Store, companyId: string, files: string[], say: (line: string) => void): Promise<boolean> {
  const open = (await store.continuityHolds.open()).filter((h) => h.company_id === companyId);
  if (open.length === 0) throw new RestoreInputError(`company ${companyId} has no open continuity hold`);
  const stored = (await store.continuityStore.sizes()).get(companyId) ?? 0;
  const supplied = (await suppliedEntries(files, (id) => (id === companyId ? stored : Number.MAX_SAFE_INTEGER))).get(companyId);
  if (!supplied) throw new RestoreInputError(`the exports hold no entry of company ${companyId} from seq ${stored} on (what the stored ledger lacks)`);
  const rows = await store.continuityStore.serviceRows();
  const seen = open.map((h) => ({ companyId, size: h.seen_size, source: h.source, ...(h.note ? { note: h.note } : {}) }));
  const chunks = jsonLines(entriesOf(store.ledger, companyId, {}));
  const storedLines = (async function* () {
    for await (const chunk of chunks) for (const l of chunk.split('\n')) if (l) yield l;
  })();
  const latest = await store.ledger.latestCheckpoint(companyId);
  const verdict = await verifyCompany({ companyId, name: companyId, file: '(the stored ledger)', lines: storedLines }, supplied, seen, trustOf(rows), latest ? [latest.note] : []);
  say(`company ${companyId}: ${verdict.base} stored, ${verdict.supplied} supplied, ${verdict.size} in all, root ${verdict.root_hash}`);
  for (const p of verdict.problems) say(`  refused: ${p}`);
  if (verdict.problems.length > 0) return false;
  const lines = [...supplied.keys()].filter((s) => s >= verdict.base && s < verdict.size).sort((a, b) => a - b).map((s) => supplied.get(s) as string);
  const written = await appendLines(store, companyId, lines);
  for (const t of rotationsIn(lines)) await store.continuityStore.recordTransition(t, SIGNATURE_ALGORITHM);
  await store.continuityHolds.decide(companyId, 'supplied', `${written} entries supplied`, iso(Date.now()));
  say(`company ${companyId}: ${written} entries appended; the hold is lifted (a running service follows within seconds)`);
  return true;
}
