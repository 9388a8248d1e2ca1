// Agent signatures (format version 4, docs/ledger-format.md §20): an agent that holds its own
// Ed25519 key signs each event as it sends it, before the service sees it, so the ledger can show
// which statements the agent itself made and which the operator wrote in its name. The entry
// hashes the signature and the key's id; the key, its agent and its period come from the company's
// agent key register, which an administrator keeps (and the administrators' trail records).
import { fromBase64, utf8, verifyEd25519 } from '#crypto';
import type { Check } from './checks.js';
import { ENVELOPE_FIELDS, type EnvelopeField } from './entry.js';
import { canonicalJson, type Json, type JsonObject } from './json.js';
import { keyIdOf } from './signature.js';

/** The first line of every agent-signed message, so it can be no other signature. */
export const AGENT_SIGNATURE_CONTEXT = 'audit-ledger/v1/agent-event\n';

/** The event fields an agent signs: everything it sends but the signature itself (absent ones as null). */
export const AGENT_SIGNED_FIELDS = ['event_type', 'data', 'extra', 'event_id', ...ENVELOPE_FIELDS] as const;

/** An event as its agent sends it (or as an entry keeps it): data is present; the rest may be null or absent. */
export type AgentSignedEvent = { event_type: string; data: JsonObject; extra?: JsonObject | null; event_id?: string | null } & { [K in EnvelopeField]?: string | null };

/** The signed object's canonical text: JCS of every AGENT_SIGNED_FIELDS member, null where the event has none. */
export function agentSignedText(event: AgentSignedEvent): string {
  const body: Record<string, Json> = {};
  for (const f of AGENT_SIGNED_FIELDS) body[f] = ((event as Record<string, unknown>)[f] ?? null) as Json;
  return canonicalJson(body as JsonObject);
}

/** The exact bytes an agent signs: the context line, then the canonical text. */
export function agentSignedMessage(event: AgentSignedEvent): Uint8Array {
  return utf8(AGENT_SIGNATURE_CONTEXT + agentSignedText(event));
}

/** The first line of the proof that whoever registers an agent key holds it (section 20). */
export const AGENT_KEY_PROOF_CONTEXT = 'audit-ledger/v1/agent-key-proof\n';

/**
 * What the holder of an agent key signs so a company may register it: the context line, then the
 * canonical JSON of the company, the agent and the public key. Naming the company, a proof made
 * for one company registers the key in no other.
 */
export function agentKeyProofMessage(p: { company_id: string; agent_id: string; public_key: string }): Uint8Array {
  return utf8(AGENT_KEY_PROOF_CONTEXT + canonicalJson({ agent_id: p.agent_id, company_id: p.company_id, public_key: p.public_key }));
}

const SORTED_SIGNED = [...AGENT_SIGNED_FIELDS].sort();
// eslint-disable-next-line no-control-regex -- the control characters are what it looks for
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * The same text as agentSignedText, built around data and extra already in canonical form (the
 * service has them from validation) instead of serializing them again; a randomized test holds
 * the two to each other.
 */
export function agentSignedTextOfCanonical(fields: Omit<AgentSignedEvent, 'data' | 'extra'>, dataJson: string, extraJson: string | null): string {
  let out = '{';
  for (let i = 0; i < SORTED_SIGNED.length; i++) {
    const f = SORTED_SIGNED[i] as string;
    if (i > 0) out += ',';
    out += `"${f}":`;
    if (f === 'data') out += dataJson;
    else if (f === 'extra') out += extraJson ?? 'null';
    else {
      const v = (fields as Record<string, unknown>)[f] ?? null;
      out += v === null ? 'null' : typeof v === 'string' && !NEEDS_ESCAPE.test(v) ? `"${v}"` : JSON.stringify(v);
    }
  }
  return `${out}}`;
}

/** A key in a company's agent key register. */
export interface AgentKey {
  key_id: string;
  agent_id: string;
  /** Raw 32-byte Ed25519 public key, base64. */
  public_key: string;
  /** When it may begin to sign (RFC 3339). */
  active_from: string;
  /** Revoked or replaced from then on (RFC 3339); null while active. */
  active_to: string | null;
}

export type AgentSignatureState =
  /** The entry carries no agent signature (any version but 4, or version 4 without one). */
  | { state: 'none' }
  /** Signed by the agent's key, inside that key's period. */
  | { state: 'valid'; key_id: string; agent_id: string }
  /** The content was erased: the signature can no longer be checked (the service checked it when it accepted the event). */
  | { state: 'erased'; key_id: string }
  /** Anything else: an unknown key, another agent's key, a date outside the key's period, or a signature that does not verify. */
  | { state: 'invalid'; key_id: string | null; detail: string };

type SignedEntry = Omit<AgentSignedEvent, 'data'> & { format_version: number; created_at: string; agent_key_id?: string | null; agent_signature?: string | null; data: JsonObject | null };

/**
 * An entry's agent signature against the register. An entry created outside the key's period
 * (after a revocation, even one dated back) is invalid: the revocation says the key could not be
 * trusted then. Times are compared as instants.
 */
export function agentSignatureState(entry: SignedEntry, keys: readonly AgentKey[]): AgentSignatureState {
  const keyId = entry.agent_key_id ?? null;
  const signature = entry.agent_signature ?? null;
  if (keyId === null && signature === null) return { state: 'none' };
  if (entry.format_version !== 4) return { state: 'invalid', key_id: keyId, detail: `an agent signature in a version ${entry.format_version} entry (only version 4 carries one)` };
  if (keyId === null || signature === null) return { state: 'invalid', key_id: keyId, detail: 'agent_key_id and agent_signature come together' };
  const key = keys.find((k) => k.key_id === keyId);
  if (!key) return { state: 'invalid', key_id: keyId, detail: `agent key ${keyId} is not in the register` };
  if (entry.agent_id !== key.agent_id) return { state: 'invalid', key_id: keyId, detail: `agent key ${keyId} belongs to agent ${key.agent_id}, not ${entry.agent_id ?? '(none)'}` };
  const at = Date.parse(entry.created_at);
  if (!(at >= Date.parse(key.active_from)) || (key.active_to !== null && !(at < Date.parse(key.active_to)))) {
    return { state: 'invalid', key_id: keyId, detail: `entry created ${entry.created_at}, outside agent key ${keyId}'s period (${key.active_from} to ${key.active_to ?? 'now'})` };
  }
  if (entry.data === null) return { state: 'erased', key_id: keyId };
  return verifyAgentSignature(key, { ...entry, data: entry.data }, signature) ? { state: 'valid', key_id: keyId, agent_id: key.agent_id } : { state: 'invalid', key_id: keyId, detail: 'the agent signature does not verify over the event' };
}

/** Does the base64 signature verify over the event (or its signed text) with this key (whose key_id must be its key's)? */
export function verifyAgentSignature(key: Pick<AgentKey, 'key_id' | 'public_key'>, event: AgentSignedEvent | { signedText: string }, signatureB64: string): boolean {
  let raw: Uint8Array;
  let sig: Uint8Array;
  try {
    raw = fromBase64(key.public_key);
    sig = fromBase64(signatureB64);
  } catch {
    return false;
  }
  if (raw.length !== 32 || sig.length !== 64 || keyIdOf(raw) !== key.key_id) return false;
  return verifyEd25519(raw, 'signedText' in event ? utf8(AGENT_SIGNATURE_CONTEXT + event.signedText) : agentSignedMessage(event), sig);
}

/** Whether an entry (as JSON) carries an agent signature or its key id. */
export const isAgentSigned = (e: Record<string, unknown>): boolean => (e.agent_key_id ?? null) !== null || (e.agent_signature ?? null) !== null;

/**
 * The agent signatures of the entries of a bundle or an export, one entry at a time, against a
 * register: for each signed entry a check (ok: which agent and key; note: erased; fail: why
 * not), then one line over them. Entries no agent signed are valid and add nothing.
 */
export class AgentSignatureTally {
  private readonly byKey = new Map<string, number>();
  private failed = 0;
  private seen = 0;

  constructor(private readonly register: readonly AgentKey[]) {}

  /** The entry's check, if an agent signed it. */
  add(e: Record<string, unknown>): Check | null {
    this.seen++;
    if (!isAgentSigned(e)) return null;
    const label = `entry seq ${String(e.seq)} (log_id ${String(e.log_id)})`;
    const at = typeof e.seq === 'number' ? { seq: e.seq } : {};
    const state = agentSignatureState(e as unknown as SignedEntry, this.register);
    if (state.state === 'valid') {
      const who = `agent ${state.agent_id} key ${state.key_id}`;
      this.byKey.set(who, (this.byKey.get(who) ?? 0) + 1);
      return { status: 'ok', code: 'agent_signature', message: `${label}: signed by agent ${state.agent_id} with key ${state.key_id}`, ...at };
    }
    if (state.state === 'erased') return { status: 'note', code: 'agent_signature', message: `${label}: signed with agent key ${state.key_id}; its content was erased, so the signature cannot be checked again`, ...at };
    this.failed++;
    return { status: 'fail', code: 'agent_signature', message: `${label}: ${state.state === 'invalid' ? state.detail : 'not an agent signature'}`, ...at };
  }

  /** The line over every entry added, or null when no agent signed any. */
  summary(): Check | null {
    const signed = [...this.byKey.values()].reduce((a, b) => a + b, 0);
    if (signed + this.failed === 0) return null;
    const who = [...this.byKey].map(([k, n]) => `${k} (${n})`).join(', ');
    const bad = this.failed > 0 ? `; ${this.failed} agent signature${this.failed === 1 ? ' does' : 's do'} not hold` : '';
    return { status: this.failed > 0 ? 'fail' : 'ok', code: 'agent_signature', message: `${signed} of ${this.seen} entries signed by their agents${who ? `: ${who}` : ''}${bad}` };
  }
}

/** Every entry's check through an AgentSignatureTally, then its summary. */
export function agentSignatureChecks(entries: Array<Record<string, unknown>>, register: readonly AgentKey[]): Check[] {
  const tally = new AgentSignatureTally(register);
  const checks = entries.map((e) => tally.add(e)).filter((c): c is Check => c !== null);
  const summary = tally.summary();
  return summary ? [...checks, summary] : checks;
}
