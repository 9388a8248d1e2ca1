// Local verification, trusting only the keys you pinned: an entry's hash and signature (a
// receipt), without asking the service.
import { contentState, type EntryBody, entryHash, keyNotActive, keysWithPeriods, type TrustedKey, verifyEntrySignature } from '@audit-ledger/core';

/** What can fail in a receipt, as a stable code (match these, never the words). */
export type ReceiptFailureCode = 'entry_malformed' | 'hash_mismatch' | 'content_mismatch' | 'unknown_key' | 'bad_signature' | 'key_not_active';

export interface ReceiptCheck {
  ok: boolean;
  /** Each failure with its code and its words. */
  failures: Array<{ code: ReceiptFailureCode; message: string }>;
  /** The failures' words alone (the same order). */
  problems: string[];
}

/**
 * The keys to trust: the text of GET /api/v1/integrity/keys (its signed transitions give each key
 * its period: docs/ledger-format.md §12), PEM or C2SP verifier keys, or parsed keys.
 */
export type PublicKeys = string | TrustedKey[];

/** The pinned keys, each with its signing period when the keys JSON carries transitions. */
export const trustedKeys = (keys: PublicKeys): TrustedKey[] => (typeof keys === 'string' ? keysWithPeriods(keys) : keys);

type Json = { [key: string]: unknown };

/**
 * An entry as the service gives it: an API read (`getLog`, `search`), a line of `exportEntries`,
 * an evidence bundle's entry, or the core's own type. Its JSON members are any JSON (they are
 * hashed as they are), so the generated API types fit as they are.
 */
export type ReceiptEntry = Omit<EntryBody, 'data' | 'extra' | 'links'> & { data: Json | null; extra: Json | null; links?: Json | null; hash: string; signature: string; key_id: string };

/** The core's view of an entry that came as JSON: every member is what JSON.parse made of it. */
export const asEntryBody = <T extends Omit<EntryBody, 'data' | 'extra' | 'links'>>(entry: T): EntryBody & T => entry as unknown as EntryBody & T;

/** Checks that the entry's hash recomputes from its fields (and, from format version 2, its content from the commitment) and that a pinned key signed it. */
export function verifyReceipt(received: ReceiptEntry, opts: { publicKeys: PublicKeys }): ReceiptCheck {
  const entry = asEntryBody(received);
  const keys = trustedKeys(opts.publicKeys);
  const failures: ReceiptCheck['failures'] = [];
  const fail = (code: ReceiptFailureCode, message: string) => failures.push({ code, message });
  let recomputed: string | undefined;
  try {
    recomputed = entryHash(entry);
  } catch (err) {
    fail('entry_malformed', `the entry cannot be hashed: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (recomputed !== undefined && recomputed !== entry.hash) fail('hash_mismatch', `hash mismatch: recomputed ${recomputed}, entry says ${entry.hash}`);
  // From format version 2: the content against the commitment the hash covers (an erased entry has none to check).
  const content = contentState(entry);
  if (content.state === 'mismatch') fail('content_mismatch', `content mismatch: ${content.detail}`);
  const key = keys.find((k) => k.keyId === entry.key_id);
  if (!key) fail('unknown_key', `key ${entry.key_id} is not one of the pinned keys`);
  else if (!verifyEntrySignature(key.raw, entry.hash, entry.signature)) fail('bad_signature', `the signature does not verify with key ${entry.key_id}`);
  else {
    // A retired key's signature on an entry dated after its retirement does not count.
    const inactive = keyNotActive(key.keyId, key.period, entry.created_at, 'an entry created at');
    if (inactive) fail('key_not_active', `key_not_active: ${inactive}`);
  }
  return { ok: failures.length === 0, failures, problems: failures.map((f) => f.message) };
}
