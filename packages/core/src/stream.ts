// Log streams' copies (docs/ledger-format.md §17): what a SIEM, a syslog server or a directory
// received from a stream, checked offline like an evidence bundle. A stream delivers batches;
// each batch is one header message (the checkpoint that covers it, the keys, the erasure
// records, the consistency proof from the previous batch's checkpoint) and one message per
// entry (the entry and its inclusion proof). The messages may arrive as JSON lines, inside an
// OCSF event (`unmapped.audit_ledger`) or in a CEF line (`auditLedger=`, base64url of the JSON),
// wrapped in a syslog header, any number of times (delivery is at least once). Pure.
import { fromBase64, fromHex, toHex } from '#crypto';
import { parseCheckpointText, parseNote } from './checkpoint.js';
import type { Check, VerificationReport } from './checks.js';
import { EVIDENCE_BUNDLE_FORMAT, plural, verifyBundle } from './bundle.js';
import type { KeyTransition } from './key-transition.js';
import type { TrustedKey } from './keys.js';
import { verifyConsistency } from './merkle.js';

export const STREAM_BATCH_FORMAT = 'audit-ledger/stream-batch/v1';

type Proven = { entry: Record<string, unknown>; inclusion_proof: { leaf_index: number; tree_size: number; proof: string[] } };

/** The first message of a batch: what every entry message of the batch is proven against. */
export interface StreamBatchHeader {
  format: typeof STREAM_BATCH_FORMAT;
  kind: 'batch';
  stream_id: string;
  batch_id: string;
  company_id: string;
  /** The batch covers the seqs from_seq–to_seq: every entry of that range the stream's filter selects. */
  from_seq: number;
  to_seq: number;
  /** How many entry messages the batch has. */
  entry_count: number;
  /** True when the stream selects some entries only; then a batch need not hold every seq of its range. */
  filtered: boolean;
  checkpoint: { note: string; tree_size: number; root_hash: string; [k: string]: unknown };
  public_keys: Array<Record<string, unknown>>;
  key_transitions: KeyTransition[];
  erasure_records: Proven[];
  /** The checkpoint the stream's previous batch was proven against, and the proof this one extends it. */
  previous_checkpoint: { tree_size: number; root_hash: string } | null;
  consistency_proof: string[] | null;
}

/** One entry of a batch. */
export interface StreamEntryMessage extends Proven {
  format: typeof STREAM_BATCH_FORMAT;
  kind: 'entry';
  stream_id: string;
  batch_id: string;
}

export type StreamMessage = StreamBatchHeader | StreamEntryMessage;

/** base64url without padding: what a CEF extension value carries without escapes. */
export function toBase64Url(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text: string): string {
  const std = text.replace(/-/g, '+').replace(/_/g, '/');
  return new TextDecoder('utf-8', { fatal: true }).decode(fromBase64(std + '='.repeat((4 - (std.length % 4)) % 4)));
}

/**
 * Where a stream message rides in the carriers that cannot hold it as a line of its own (docs/
 * integrations.md, "Log streams"): the member of an OCSF event's `unmapped` object, and the CEF
 * extension key (its value the message's JSON in base64url). The service writes them, every
 * stream verifier reads them: one place for both.
 */
export const STREAM_CARRIERS = { ocsfUnmapped: 'audit_ledger', cefExtension: 'auditLedger' } as const;

// The extension starts after the header's last '|'; each key after a space.
const CEF_CARRIER = new RegExp(`(?:^|[\\s|])${STREAM_CARRIERS.cefExtension}=([A-Za-z0-9_-]+)`);

const isMessage = (v: unknown): v is StreamMessage => typeof v === 'object' && v !== null && (v as { format?: unknown }).format === STREAM_BATCH_FORMAT;

/**
 * The stream message one received line holds, or null when it holds none: a JSON message, an OCSF
 * event carrying one in `unmapped.audit_ledger`, a Splunk HEC or Datadog wrapper (`event`,
 * `message`), or a CEF line whose `auditLedger` extension is the message in base64url; any
 * syslog or file header before the JSON or the CEF text is skipped.
 */
export function streamMessageOf(line: string): StreamMessage | null {
  const cef = line.indexOf('CEF:');
  const brace = line.indexOf('{');
  if (cef >= 0 && (brace < 0 || cef < brace)) {
    const m = CEF_CARRIER.exec(line.slice(cef));
    if (!m) return null;
    try {
      const v = JSON.parse(fromBase64Url(m[1] as string)) as unknown;
      return isMessage(v) ? v : null;
    } catch {
      return null;
    }
  }
  if (brace < 0) return null;
  let v: unknown;
  try {
    v = JSON.parse(line.slice(brace));
  } catch {
    return null;
  }
  return unwrap(v, 0);
}

function unwrap(v: unknown, depth: number): StreamMessage | null {
  if (isMessage(v)) return v;
  if (depth > 2 || typeof v !== 'object' || v === null) return null;
  const o = v as { unmapped?: Record<string, unknown>; event?: unknown; message?: unknown };
  const carried = o.unmapped?.[STREAM_CARRIERS.ocsfUnmapped];
  if (carried !== undefined) return unwrap(carried, depth + 1);
  for (const inner of [o.event, o.message]) {
    if (typeof inner === 'string') {
      const m = streamMessageOf(inner);
      if (m) return m;
    } else if (inner !== undefined) {
      const m = unwrap(inner, depth + 1);
      if (m) return m;
    }
  }
  return null;
}

interface BatchCopy {
  header: StreamBatchHeader;
  /** Entry messages by their exact JSON (a repeated delivery adds nothing). */
  entries: Map<string, StreamEntryMessage>;
  erasures: Map<string, Proven>;
  headers: Set<string>;
}

/**
 * Collects a stream copy's messages (in any order, repeated any number of times) and checks it:
 * every batch as an evidence bundle against its own checkpoint, every batch complete (its header's
 * entry count; for an unfiltered stream every seq of its range), the batches' ranges following
 * each other without a gap, and each checkpoint a consistent extension of the one before.
 */
export class StreamCopyVerifier {
  private readonly batches = new Map<string, BatchCopy>();
  private readonly orphans = new Map<string, StreamEntryMessage[]>();
  messages = 0;
  ignored = 0;

  /** Adds one received line; a line that holds no stream message is counted and passed over. */
  addLine(line: string): void {
    if (line.trim() === '') return;
    const m = streamMessageOf(line);
    if (m) this.add(m);
    else this.ignored++;
  }

  add(m: StreamMessage): void {
    if (m.kind !== 'batch' && m.kind !== 'entry') {
      this.ignored++;
      return;
    }
    this.messages++;
    const key = `${String(m.stream_id)}\u0000${String(m.batch_id)}`;
    if (m.kind === 'batch') {
      let b = this.batches.get(key);
      if (!b) {
        b = { header: m, entries: new Map(), erasures: new Map(), headers: new Set() };
        this.batches.set(key, b);
        for (const e of this.orphans.get(key) ?? []) b.entries.set(JSON.stringify(e), e);
        this.orphans.delete(key);
      }
      b.headers.add(JSON.stringify({ ...m, erasure_records: [] }));
      for (const r of Array.isArray(m.erasure_records) ? m.erasure_records : []) b.erasures.set(JSON.stringify(r), r);
    } else {
      const b = this.batches.get(key);
      if (b) b.entries.set(JSON.stringify(m), m);
      else this.orphans.set(key, [...(this.orphans.get(key) ?? []), m]);
    }
  }

  finish(keys: TrustedKey[] | null): VerificationReport {
    const checks: Check[] = [];
    const pinned = keys !== null;
    if (!pinned) checks.push({ status: 'note', code: 'unpinned', message: 'no --public-key given: checking against the keys the copy carries itself, which anyone can replace' });
    for (const [key, entries] of this.orphans) checks.push({ status: 'fail', code: 'stream_batch', message: `${plural(entries.length, 'entry message', 'entry messages')} of batch ${key.split('\u0000')[1] as string} arrived without the batch's header, so nothing proves them` });
    if (this.batches.size === 0 && this.orphans.size === 0) checks.push({ status: 'fail', code: 'not_a_bundle', message: `no stream batch in this copy (${STREAM_BATCH_FORMAT})` });
    const streams = new Map<string, BatchCopy[]>();
    for (const b of this.batches.values()) streams.set(String(b.header.stream_id), [...(streams.get(String(b.header.stream_id)) ?? []), b]);
    for (const [streamId, batches] of streams) checks.push(...this.checkStream(streamId, batches, keys));
    const companies = new Map<string, BatchCopy[]>();
    for (const b of this.batches.values()) companies.set(String(b.header.company_id), [...(companies.get(String(b.header.company_id)) ?? []), b]);
    for (const batches of companies.values()) checks.push(...this.oneHistory(batches.sort((a, b) => a.header.from_seq - b.header.from_seq || a.header.to_seq - b.header.to_seq)));
    return { ok: !checks.some((c) => c.status === 'fail'), pinned, checks };
  }

  /**
   * One history per company, across every stream of it in the copy: two batches that disagree
   * about an entry number (its hash) or about the root of a tree size show two different ledgers
   * under the same numbers, a fork or a rollback, even where each batch verifies on its own and
   * follows the one before it, and even when a second stream (made again after a restore that
   * lost the first) delivered the other history.
   */
  private oneHistory(batches: BatchCopy[]): Check[] {
    const checks: Check[] = [];
    const hashAt = new Map<number, { hash: string; label: string }>();
    const rootAt = new Map<number, { root: string; label: string }>();
    let forks = 0;
    for (const b of batches) {
      const streamId = String(b.header.stream_id);
      const label = `stream ${streamId} batch ${String(b.header.batch_id)}`;
      for (const i of b.entries.values()) {
        const seq = Number(i.entry?.seq);
        const hash = String(i.entry?.hash);
        const seen = hashAt.get(seq);
        if (seen === undefined) hashAt.set(seq, { hash, label });
        else if (seen.hash !== hash && forks++ < 20) checks.push({ status: 'fail', code: 'stream_fork', message: `company ${String(b.header.company_id)}: seq ${seq} is ${seen.hash} in ${seen.label} but ${hash} in ${label}: the copy holds two histories under the same entry numbers (a fork or a rollback)`, seq });
      }
      const cp = b.header.checkpoint;
      const size = Number(cp?.tree_size);
      const root = String(cp?.root_hash);
      const seenRoot = rootAt.get(size);
      if (seenRoot === undefined) rootAt.set(size, { root, label });
      else if (seenRoot.root !== root && forks++ < 20) checks.push({ status: 'fail', code: 'stream_fork', message: `company ${String(b.header.company_id)}: tree size ${size} has root ${seenRoot.root} in ${seenRoot.label} but ${root} in ${label}: two histories (a fork or a rollback)` });
      const prev = b.header.previous_checkpoint;
      if (prev) {
        const known = rootAt.get(prev.tree_size);
        if (known === undefined) rootAt.set(prev.tree_size, { root: prev.root_hash, label: `${label}'s previous checkpoint` });
        else if (known.root !== prev.root_hash && forks++ < 20) checks.push({ status: 'fail', code: 'stream_fork', message: `company ${String(b.header.company_id)}: tree size ${prev.tree_size} has root ${known.root} in ${known.label} but ${label} extends one with root ${prev.root_hash}: two histories (a fork or a rollback)` });
      }
    }
    return checks;
  }

  private checkStream(streamId: string, batches: BatchCopy[], keys: TrustedKey[] | null): Check[] {
    const checks: Check[] = [];
    batches.sort((a, b) => a.header.from_seq - b.header.from_seq || a.header.to_seq - b.header.to_seq);
    let entries = 0;
    let failedBatches = 0;
    const roots = new Map<number, string>();
    for (const b of batches) {
      const h = b.header;
      const label = `stream ${streamId} batch ${String(h.batch_id)} (seq ${String(h.from_seq)}–${String(h.to_seq)})`;
      const batchChecks: Check[] = [];
      const items = [...b.entries.values()].sort((x, y) => Number(x.entry?.seq) - Number(y.entry?.seq));
      const report = verifyBundle(
        {
          format: EVIDENCE_BUNDLE_FORMAT,
          company_id: h.company_id,
          ...(h.filtered ? {} : { selection: { from_seq: h.from_seq, to_seq: h.to_seq } }),
          checkpoint: h.checkpoint,
          public_keys: h.public_keys,
          key_transitions: h.key_transitions,
          entries: items.map((i) => ({ entry: i.entry, inclusion_proof: i.inclusion_proof })),
          erasure_records: [...b.erasures.values()],
        },
        keys,
      );
      // Failures, and what the bundle check notes beyond the pinning (erased entries accounted for).
      for (const c of report.checks) if (c.status === 'fail' || (c.status === 'note' && c.code !== 'unpinned')) batchChecks.push({ ...c, message: `${label}: ${c.message}` });
      const seqs = new Set(items.map((i) => i.entry?.seq));
      if (seqs.size !== h.entry_count) batchChecks.push({ status: 'fail', code: 'entries_missing', message: `${label}: the header announces ${plural(h.entry_count, 'entry', 'entries')}, the copy holds ${seqs.size}` });
      if (seqs.size !== items.length) batchChecks.push({ status: 'fail', code: 'stream_batch', message: `${label}: one seq arrived with two different contents` });
      for (const i of items) {
        const s = Number(i.entry?.seq);
        if (!(s >= h.from_seq && s <= h.to_seq)) batchChecks.push({ status: 'fail', code: 'stream_batch', message: `${label}: entry seq ${s} lies outside the batch's range` });
      }
      if (b.headers.size > 1) batchChecks.push({ status: 'note', code: 'stream_batch', message: `${label}: delivered more than once with different headers (a checkpoint or an erasure came between the deliveries); every copy was checked` });
      try {
        const cp = parseCheckpointText(parseNote(String(h.checkpoint?.note)).text);
        if (report.ok) roots.set(cp.treeSize, toHex(cp.rootHash));
      } catch {
        // verifyBundle has reported the malformed checkpoint
      }
      if (batchChecks.some((c) => c.status === 'fail')) failedBatches++;
      else entries += items.length;
      checks.push(...batchChecks);
    }
    // Every checkpoint of the copy extends every smaller one: each pair of neighbours in tree size
    // is proven by the batch that names the smaller as its previous checkpoint (checked below).
    // Ranges follow each other: a gap is entries the copy never received.
    let coveredTo: number | null = null;
    for (const b of batches) {
      const h = b.header;
      if (coveredTo !== null && h.from_seq > coveredTo + 1) checks.push({ status: 'fail', code: 'stream_gap', message: `stream ${streamId}: no batch covers seq ${coveredTo + 1}–${h.from_seq - 1} (between batches): the copy lacks what the stream delivered there`, seq: coveredTo + 1 });
      coveredTo = coveredTo === null ? h.to_seq : Math.max(coveredTo, h.to_seq);
    }
    // Each batch's checkpoint extends the previous batch's: the ledger shown to the copy never forked.
    let consistent = 0;
    for (const b of batches) {
      const h = b.header;
      const prev = h.previous_checkpoint;
      if (!prev || !Array.isArray(h.consistency_proof)) continue;
      const label = `stream ${streamId} batch ${String(h.batch_id)}`;
      const known = roots.get(prev.tree_size);
      if (known !== undefined && known !== prev.root_hash) {
        checks.push({ status: 'fail', code: 'consistency', message: `${label}: names the previous checkpoint of tree size ${prev.tree_size} with root ${prev.root_hash}, but the signed checkpoint of that size in this copy has root ${known}` });
        continue;
      }
      let ok = false;
      try {
        ok = verifyConsistency(prev.tree_size, Number(h.checkpoint.tree_size), h.consistency_proof.map(fromHex), fromHex(prev.root_hash), fromHex(String(h.checkpoint.root_hash)));
      } catch {
        ok = false;
      }
      if (ok) consistent++;
      else checks.push({ status: 'fail', code: 'consistency', message: `${label}: the consistency proof from tree size ${prev.tree_size} to ${String(h.checkpoint.tree_size)} does not verify: the ledger may have been rewritten between two batches` });
    }
    const first = batches[0]?.header;
    if (first && coveredTo !== null) {
      const filtered = batches.some((b) => b.header.filtered);
      checks.push({
        status: failedBatches === 0 ? 'ok' : 'fail',
        code: 'entries',
        message: `stream ${streamId}: ${plural(batches.length, 'batch', 'batches')} covering seq ${first.from_seq}–${coveredTo}, ${plural(entries, 'entry', 'entries')} verified${failedBatches ? `; ${failedBatches} failed` : ''}, ${plural(consistent, 'checkpoint', 'checkpoints')} proven consistent with the one before${filtered ? '; the stream is filtered, so entries its filter leaves out are not in the copy' : ''}`,
      });
    }
    return checks;
  }
}
