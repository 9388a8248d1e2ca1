// A database as an earlier version of the service left it: the schema migrated to that version
// (migrations are never edited, so the schema at version V is exactly what V's code made), then a
// company's chain written as that version wrote it: entries of the ledger format version it
// wrote (1 before 0009, 2 before 0010, 3 after), signed by the service key, with the stored tree
// and a signed checkpoint where the schema had them, in only the columns that schema had.
import { randomBytes, randomUUID } from 'node:crypto';
import { canonicalEntryText, canonicalJson, CONTENT_SALT_BYTES, contentCommitment, contentText, GENESIS_PREV_HASH, sha256Hex, toHex, TreeEdge } from '@audit-ledger/core';
import type { Kysely } from 'kysely';
import { signEntryHash } from '../../src/crypto/signing.js';
import { CheckpointSigner } from '../../src/ledger/checkpoints.js';
import type { SigningKey } from '../../src/ledger/keyring.js';
import { publicKeyRow } from '../../src/ledger/keyring.js';
import { growTree } from '../../src/ledger/tree-rows.js';
import { migrator } from '../../src/store/migrate.js';

export interface Fixture {
  companyId: string;
  companyName: string;
  entries: number;
  /** The signed checkpoint the version kept (none before 0003). */
  checkpoint: { tree_size: number; root_hash: string } | null;
}

/** The ledger format version the service wrote at schema `version`. */
export function formatAt(version: string): 1 | 2 | 3 {
  return version < '0009' ? 1 : version < '0010' ? 2 : 3;
}

export async function writeFixture(db: Kysely<unknown>, version: string, key: SigningKey, origin: string, entries = 40): Promise<Fixture> {
  const { error } = await migrator(db).migrateTo(version);
  if (error) throw error;
  const tables = new Map((await db.introspection.getTables()).map((t) => [t.name, new Set(t.columns.map((c) => c.name))]));
  const insert = async (table: string, rows: Array<Record<string, unknown>>) => {
    const cols = tables.get(table);
    if (!cols) return;
    const kept = rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => cols.has(k))));
    for (let i = 0; i < kept.length; i += 100) await (db as Kysely<Record<string, Record<string, unknown>>>).insertInto(table).values(kept.slice(i, i + 100)).execute();
  };
  const companyId = randomUUID();
  const companyName = `fixture-${version}`;
  await insert('companies', [{ company_id: companyId, name: companyName, created_at: '2026-01-15T09:00:00.000Z' }]);
  if (!tables.has('log_entries')) return { companyId, companyName, entries: 0, checkpoint: null };

  await insert('signing_keys', [publicKeyRow(key, '2026-01-01T00:00:00.000Z')]);
  const format = formatAt(version);
  const rows: Array<Record<string, unknown>> = [];
  let prev = GENESIS_PREV_HASH;
  const start = Date.parse('2026-02-01T10:00:00.000Z');
  for (let seq = 0; seq < entries; seq++) {
    const dataJson = canonicalJson({ step: seq, tool: seq % 3 === 0 ? 'search' : 'refund', amount: seq * 1.5, note: `entry ${seq} written at schema ${version}` });
    const extraJson = seq % 5 === 0 ? canonicalJson({ model: 'm-1' }) : null;
    const salt = randomBytes(CONTENT_SALT_BYTES);
    const row: Record<string, unknown> = {
      format_version: format,
      company_id: companyId,
      seq,
      log_id: randomUUID(),
      event_type: seq % 4 === 0 ? 'decision.made' : 'tool.called',
      data: dataJson,
      source: 'fixture-agent',
      trace_id: seq < 20 ? '6f1c2a4e-3b5d-4c7e-9f10-2a3b4c5d6e7f' : null,
      session_id: null,
      timestamp: null,
      span_id: null,
      parent_span_id: null,
      parent_event_id: format === 3 && seq > 0 ? `ev-${seq - 1}` : null,
      root_event_id: null,
      agent_id: 'agent-7',
      workflow_id: null,
      causality_type: null,
      idempotency_key: seq % 10 === 0 ? `idem-${seq}` : null,
      schema_version: null,
      extra: extraJson,
      created_at: new Date(start + seq * 250).toISOString(),
      prev_hash: prev,
      key_id: key.keyId,
      idempotency_conflict_of: null,
      content_commitment: format >= 2 ? contentCommitment(salt, contentText(dataJson, extraJson)) : null,
      content_salt: format >= 2 ? salt.toString('base64') : null,
      erased_at: null,
      erasure_id: null,
      event_id: format === 3 ? `ev-${seq}` : null,
      links: null,
    };
    row.hash = sha256Hex(canonicalEntryText(row as never, dataJson, extraJson, null));
    row.signature = signEntryHash(key.custody.keyObject as NonNullable<typeof key.custody.keyObject>, row.hash as string);
    prev = row.hash as string;
    rows.push(row);
  }
  await insert('log_entries', rows);
  const last = rows.at(-1) as Record<string, unknown>;
  await insert('chain_heads', [{ company_id: companyId, last_seq: entries - 1, last_hash: last.hash, last_created_at: last.created_at }]);
  if (!tables.has('merkle_hashes')) return { companyId, companyName, entries, checkpoint: null };
  const edge = TreeEdge.empty();
  const tree = growTree(edge, rows.map((r) => r.hash as string));
  await insert('merkle_hashes', tree.indexes.map((idx, i) => ({ company_id: companyId, idx, hash: tree.hashes[i] })));
  const cp = new CheckpointSigner(origin).sign(key, companyId, entries, edge.root(), start + entries * 250 + 1000);
  await insert('checkpoints', [{ ...cp }]);
  return { companyId, companyName, entries, checkpoint: { tree_size: entries, root_hash: toHex(edge.root()) } };
}
