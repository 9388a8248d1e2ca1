// One entry on its own: what every verifier checks of an entry whatever else it checks (docs/
// ledger-format.md §4, §5, §12, §13): its fields hash to its hash, its content matches the
// commitment the hash covers, and a known key signed its hash inside that key's period. The
// service's entry check (verifyRecord) and full scan (scan.ts), the offline bundle and export
// verifier (bundle.ts), the SDK's receipts and the console (through the SDK) all call it, so a
// code means the same thing wherever it is reported. What an entry's neighbours say (links, order,
// erasure records) is verify.ts's and the scanner's.
import { type ContentState, contentState } from './content.js';
import { commitsContent, entryHash, hashedFields, type LedgerEntry } from './entry.js';
import { type KeyPeriod, keyNotActive } from './key-periods.js';
import { type EntryRecord, recomputeHash, recordContentState } from './record.js';
import { verifyEntrySignature } from './signature.js';

/** What one failed check of an entry is about. A client branches on this, never on the words. */
export type EntryCheckCode =
  /** A hashed field is missing, or the fields cannot be hashed. */
  | 'entry_malformed'
  /** The fields do not hash to the entry's hash. */
  | 'hash_mismatch'
  /** Versions 2 and 3: data, extra (and links) do not rebuild the content commitment. */
  | 'content_mismatch'
  /** No key the checker trusts has the entry's key_id. */
  | 'unknown_key'
  /** The signature does not verify over the entry's hash. */
  | 'bad_signature'
  /** A valid signature made outside its key's period (after its retirement, before its introduction). */
  | 'key_not_active';

/** The codes about the signature (the rest are about the entry's fields): verifiers report them apart. */
export const isSignatureCode = (code: string): boolean => code === 'unknown_key' || code === 'bad_signature' || code === 'key_not_active';

export interface EntryProblem {
  code: EntryCheckCode;
  /** One sentence for a person. */
  detail: string;
}

/** The key an entry names, as the checker trusts it: its raw Ed25519 bytes and when it may sign. */
export interface EntryKey {
  raw: Uint8Array;
  period?: KeyPeriod | undefined;
}

export interface EntryAlone {
  /** What the fields hash to; null when they cannot be hashed. */
  hash: string | null;
  /** The content against its commitment; null when the fields cannot be read. */
  content: ContentState['state'] | null;
  problems: EntryProblem[];
}

export interface EntryCheckOptions {
  /** Whether to check the signature (a full scan may leave it out: 60 µs an entry). Default true. */
  signature?: boolean;
}

/** An entry as JSON gives it (a bundle's, an export line, an API answer): checked on its own. */
export function checkEntryAlone(e: LedgerEntry, key: EntryKey | undefined, opts: EntryCheckOptions = {}): EntryAlone {
  const missing = hashedFields(Number(e.format_version)).filter((f) => !(f in e));
  if (missing.length > 0) return { hash: null, content: null, problems: [{ code: 'entry_malformed', detail: `missing fields ${missing.join(', ')}` }] };
  let hash: string;
  let content: ContentState;
  try {
    hash = entryHash(e);
    content = contentState(e);
  } catch (err) {
    return { hash: null, content: null, problems: [{ code: 'entry_malformed', detail: `cannot be hashed: ${(err as Error).message}` }] };
  }
  return judge(e, hash, content, key, opts);
}

/** A stored record (data and extra as their canonical text): the same checks, hashing the stored text directly. */
export function checkRecordAlone(r: EntryRecord, key: EntryKey | undefined, opts: EntryCheckOptions = {}): EntryAlone {
  return judge(r, recomputeHash(r), commitsContent(r.format_version) ? recordContentState(r) : { state: 'hashed' }, key, opts);
}

function judge(e: { hash: string; signature: string; key_id: string; created_at: string }, hash: string, content: ContentState, key: EntryKey | undefined, opts: EntryCheckOptions): EntryAlone {
  const problems: EntryProblem[] = [];
  if (hash !== e.hash) problems.push({ code: 'hash_mismatch', detail: `recomputed hash ${hash} differs from stored hash ${e.hash}` });
  if (content.state === 'mismatch') problems.push({ code: 'content_mismatch', detail: `content does not match its commitment: ${content.detail}` });
  if (opts.signature !== false) {
    const signature = checkEntrySignature(e, key);
    if (signature) problems.push(signature);
  }
  return { hash, content: content.state, problems };
}

/**
 * The signature part alone (an export verifier checks it again once a later key transition
 * makes the key trusted): over the stored hash (§5), by a known key, inside its period (§12).
 * Whether the hash is that of the fields is checkEntryAlone's.
 */
export function checkEntrySignature(e: { hash: string; signature: string; key_id: string; created_at: unknown }, key: EntryKey | undefined): EntryProblem | null {
  if (!key) return { code: 'unknown_key', detail: `no known signing key has key_id ${e.key_id}` };
  if (!verifyEntrySignature(key.raw, e.hash, e.signature)) return { code: 'bad_signature', detail: `the signature does not verify with key ${e.key_id}` };
  // A signature counts only inside its key's period: a retired key can sign anything.
  const inactive = keyNotActive(e.key_id, key.period, e.created_at, 'an entry created at');
  return inactive ? { code: 'key_not_active', detail: inactive } : null;
}
