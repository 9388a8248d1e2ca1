// Local verification, trusting only the keys you pinned: an entry's hash and signature (a
// receipt), without asking the service.
import { type AgentKey, type AgentSignatureState, agentSignatureState, checkEntryAlone, type EntryBody, type EntryCheckCode, keysWithPeriods, type LedgerEntry, type TrustedKey } from '@audit-ledger/core';

/**
 * What can fail in a receipt, as a stable code (match these, never the words): the core's codes
 * for one entry checked on its own (entry-check.ts), and an agent signature that does not hold.
 */
export type ReceiptFailureCode = EntryCheckCode | 'agent_signature_invalid';

export interface ReceiptCheck {
  ok: boolean;
  /** With agentKeys: whether the agent itself signed the entry, and with which key (docs/ledger-format.md §20). */
  agent?: AgentSignatureState;
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

/**
 * Checks that the entry's hash recomputes from its fields (and, from format version 2, its content
 * from the commitment) and that a pinned key signed it. With agentKeys (the items of GET
 * /agent-keys), also the agent's own signature: `agent` says whether and with which key the agent
 * signed it, and one that does not hold is a failure.
 */
export function verifyReceipt(received: ReceiptEntry, opts: { publicKeys: PublicKeys; agentKeys?: AgentKey[] }): ReceiptCheck {
  const entry = asEntryBody(received);
  const key = trustedKeys(opts.publicKeys).find((k) => k.keyId === entry.key_id);
  // The core's check of one entry on its own (the service, the offline verifier and the console run the same).
  const failures: ReceiptCheck['failures'] = checkEntryAlone(entry as LedgerEntry, key).problems.map((p) => ({ code: p.code, message: p.code === 'unknown_key' ? `key ${entry.key_id} is not one of the pinned keys` : p.detail }));
  if (!opts.agentKeys) return { ok: failures.length === 0, failures, problems: failures.map((f) => f.message) };
  const agent = agentSignatureState(entry as Parameters<typeof agentSignatureState>[0], opts.agentKeys);
  if (agent.state === 'invalid') failures.push({ code: 'agent_signature_invalid', message: agent.detail });
  return { ok: failures.length === 0, agent, failures, problems: failures.map((f) => f.message) };
}
