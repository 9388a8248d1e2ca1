// Agents' own signing keys (issue 32, part 2; docs/ledger-format.md §20), without HTTP. An admin
// registers an agent's Ed25519 public key, replaces it (rotation) or revokes it, with dates; each
// change is an administrators' trail entry, written before the register changes. Ingestion asks
// check() about every event that carries an agent signature: the key must be registered in the
// company, belong to the event's agent_id, be active now, and verify over the event as it will be
// stored; one that does not is refused (400) and nothing of its request is stored.
import { agentKeyProofMessage, AGENT_SIGNATURE_CONTEXT, type AgentKey, type AgentSignatureState, agentSignatureState, agentSignedTextOfCanonical, fromBase64, hasSmallOrder, isCanonicalPoint, keyIdOf, type LedgerEntry, utf8, verifyEd25519 } from '@audit-ledger/core';
import type { VerifyItem } from '../ledger/signer.js';
import type { Principal } from '../auth/authenticate.js';
import { type AdminTrail } from '../ingestion/recorder.js';
import { actorOf } from '../auth/authenticate.js';
import { DomainError, type FieldError, InputError, NotFoundError } from '../kernel/domain-error.js';
import { iso } from '../kernel/time.js';
import type { PreparedEvent } from '../ledger/appender/types.js';
import type { AgentKeyRow, AgentKeyStore } from '../store/agent-keys.js';

export class AgentKeyExistsError extends DomainError<'agent_key_exists'> {
  constructor(keyId: string, agentId: string) {
    super('agent_key_exists', `agent key ${keyId} is registered already (agent ${agentId}); a key is registered once, for one agent`, { keyId });
  }
}

export class AgentKeyEndedError extends DomainError<'agent_key_ended'> {
  constructor(row: AgentKeyRow) {
    super('agent_key_ended', `agent key ${row.key_id} ended ${row.active_to} (${row.ended_reason ?? 'revoked'})`, { keyId: row.key_id });
  }
}

export class AgentSignatureError extends DomainError<'agent_signature_invalid'> {
  constructor(errors: FieldError[]) {
    super('agent_signature_invalid', errors.map((e) => `${e.field} ${e.message}`).join('; '), { errors });
  }
}

export interface RegisterInput {
  agent_id: string;
  /** Raw 32-byte Ed25519 public key, base64. */
  public_key: string;
  /** A key of the same agent this one replaces: it stops when this one starts. */
  replaces?: string | undefined;
  /** base64 of the key's Ed25519 signature of agentKeyProofMessage (proof of possession). */
  proof: string;
}

export interface RevokeInput {
  reason: string;
  /** From when the key is no longer trusted (default now): may be earlier, when it was compromised before it was found out; never later than now. */
  effective_at?: string | undefined;
}

export const agentKeyView = (k: AgentKeyRow) => ({
  key_id: k.key_id,
  agent_id: k.agent_id,
  public_key: k.public_key,
  active_from: k.active_from,
  active_to: k.active_to,
  active: k.active_to === null,
  ended_reason: k.ended_reason,
  registered_at: k.registered_at,
  registered_by: k.registered_by,
});

/** The register as the core reads it. */
const asAgentKey = (k: AgentKeyRow): AgentKey => ({ key_id: k.key_id, agent_id: k.agent_id, public_key: k.public_key, active_from: k.active_from, active_to: k.active_to });

/** The text an agent signed, of the event as its entry will store it (from the canonical data and extra validation made). */
export function signedTextOf(ev: PreparedEvent): { signedText: string } {
  return { signedText: agentSignedTextOfCanonical({ event_type: ev.event_type, event_id: ev.eventId, ...ev.envelope }, ev.dataJson, ev.extraJson) };
}

export class AgentKeys {
  constructor(
    private readonly deps: {
      store: AgentKeyStore;
      trail: AdminTrail;
      clock: () => number;
      /** Checks Ed25519 signatures, a large request's shared with the signing workers (ledger/signer.ts); here by default. */
      verifyMany?: (items: VerifyItem[]) => Promise<boolean[]>;
    },
  ) {}

  async register(p: Principal & { kind: 'user' }, input: RegisterInput): Promise<AgentKeyRow> {
    const { store, trail, clock } = this.deps;
    let raw: Uint8Array | undefined;
    try {
      raw = fromBase64(input.public_key);
    } catch {
      raw = undefined;
    }
    if (raw?.length !== 32) throw new InputError([{ field: '/body/public_key', message: 'must be the raw 32-byte Ed25519 public key in base64 (44 characters)' }]);
    // A point of small order (all zeros, the identity, …) or a non-canonical encoding: every
    // verifier of the format refuses signatures by it (docs/ledger-format.md §4), so it is refused here.
    if (hasSmallOrder(raw) || !isCanonicalPoint(raw)) throw new InputError([{ field: '/body/public_key', message: 'is a point of small order or not a canonical encoding: no signature by it verifies (docs/ledger-format.md §4)' }]);
    // Proof of possession: the key's holder signed this company, agent and key, so nobody
    // registers a key they do not hold (and a proof made for one company serves in no other).
    let proof: Uint8Array | undefined;
    try {
      proof = fromBase64(input.proof);
    } catch {
      proof = undefined;
    }
    if (proof?.length !== 64 || !verifyEd25519(raw, agentKeyProofMessage({ company_id: p.companyId, agent_id: input.agent_id, public_key: input.public_key }), proof)) {
      throw new InputError([{ field: '/body/proof', message: "is not this key's signature of this company, agent and key (docs/ledger-format.md §20: the SDK's agentKeyRegistration makes it)" }]);
    }
    const keyId = keyIdOf(raw);
    const known = await store.get(p.companyId, keyId);
    if (known) throw new AgentKeyExistsError(keyId, known.agent_id);
    let replaced: AgentKeyRow | undefined;
    if (input.replaces !== undefined) {
      replaced = await store.get(p.companyId, input.replaces);
      if (!replaced) throw new NotFoundError(`no agent key ${input.replaces} to replace`);
      if (replaced.agent_id !== input.agent_id) throw new InputError([{ field: '/body/replaces', message: `agent key ${input.replaces} belongs to agent ${replaced.agent_id}, not ${input.agent_id}` }]);
      if (replaced.active_to !== null) throw new AgentKeyEndedError(replaced);
    }
    const at = iso(clock());
    const row: AgentKeyRow = { company_id: p.companyId, key_id: keyId, agent_id: input.agent_id, public_key: input.public_key, active_from: at, active_to: null, ended_reason: null, registered_at: at, registered_by: p.userId };
    // The register's primary key decides between two requests registering one key at once: the
    // second gets 409 and records nothing. The trail entry follows; if it cannot be recorded, the
    // registration is taken back, so no key is in force without its entry.
    if (!(await store.insert(row))) throw new AgentKeyExistsError(keyId, input.agent_id);
    try {
      await trail.record(p.companyId, 'agent_key.registered', actorOf(p), { key_id: keyId, agent_id: row.agent_id, public_key: row.public_key, active_from: at, replaces: replaced?.key_id ?? null, proof: input.proof });
    } catch (err) {
      await store.remove(p.companyId, keyId);
      throw err;
    }
    if (replaced) await store.end(p.companyId, replaced.key_id, at, `replaced by ${keyId}`);
    return row;
  }

  async revoke(p: Principal & { kind: 'user' }, keyId: string, input: RevokeInput): Promise<AgentKeyRow> {
    const { store, trail, clock } = this.deps;
    const row = await store.get(p.companyId, keyId);
    if (!row) throw new NotFoundError(`no agent key ${keyId}`);
    if (row.active_to !== null) throw new AgentKeyEndedError(row);
    const now = clock();
    const effective = input.effective_at === undefined ? now : Date.parse(input.effective_at);
    if (effective > now) throw new InputError([{ field: '/body/effective_at', message: 'may not be in the future: revoke the key when the time comes' }]);
    // Never before the key began: the revocation then covers its whole period.
    const at = iso(Math.max(effective, Date.parse(row.active_from)));
    await trail.record(p.companyId, 'agent_key.revoked', actorOf(p), { key_id: keyId, agent_id: row.agent_id, effective_at: at, reason: input.reason });
    if (!(await store.end(p.companyId, keyId, at, input.reason))) throw new AgentKeyEndedError((await store.get(p.companyId, keyId)) as AgentKeyRow);
    return { ...row, active_to: at, ended_reason: input.reason };
  }

  list(companyId: string, agentId?: string): Promise<AgentKeyRow[]> {
    return this.deps.store.list(companyId, agentId);
  }

  /**
   * Checks the agent signature of every event that carries one (pointer: where it is in the
   * request), against the register as it is now: one query for the request's keys.
   */
  async check(companyId: string, events: PreparedEvent[], pointer: (i: number) => string): Promise<void> {
    const signed = events.flatMap((ev, i) => (ev.agentSignature ? [{ ev, i, sig: ev.agentSignature }] : []));
    if (signed.length === 0) return;
    const keys = new Map((await this.deps.store.byIds(companyId, [...new Set(signed.map((s) => s.sig.keyId))])).map((k) => [k.key_id, k]));
    const now = this.deps.clock();
    const errors: Array<FieldError & { i: number }> = [];
    const toVerify: Array<VerifyItem & { i: number; keyId: string }> = [];
    for (const { ev, i, sig } of signed) {
      const key = keys.get(sig.keyId);
      const raw = key ? fromBase64(key.public_key) : undefined;
      if (!key || raw?.length !== 32 || keyIdOf(raw) !== key.key_id) errors.push({ i, field: `${pointer(i)}/agent_key_id`, message: `agent key ${sig.keyId} is not registered for this company` });
      else if (ev.envelope.agent_id !== key.agent_id) errors.push({ i, field: `${pointer(i)}/agent_id`, message: `agent key ${sig.keyId} is agent ${key.agent_id}'s; the event names ${ev.envelope.agent_id === null ? 'no agent_id' : `agent ${ev.envelope.agent_id}`}` });
      else if (now < Date.parse(key.active_from) || (key.active_to !== null && now >= Date.parse(key.active_to))) errors.push({ i, field: `${pointer(i)}/agent_key_id`, message: `agent key ${sig.keyId} is not active (${key.active_to === null ? `from ${key.active_from}` : `ended ${key.active_to}: ${key.ended_reason ?? 'revoked'}`})` });
      // The input schema let through only 64 bytes of base64.
      else toVerify.push({ i, keyId: sig.keyId, key: raw, message: utf8(AGENT_SIGNATURE_CONTEXT + signedTextOf(ev).signedText), signature: fromBase64(sig.signature) });
    }
    const verifyMany = this.deps.verifyMany ?? ((items: VerifyItem[]) => Promise.resolve(items.map((v) => verifyEd25519(v.key, v.message, v.signature))));
    const oks = await verifyMany(toVerify);
    toVerify.forEach((v, n) => {
      if (!oks[n]) errors.push({ i: v.i, field: `${pointer(v.i)}/agent_signature`, message: `does not verify with agent key ${v.keyId} over the event as it would be stored (docs/ledger-format.md §20)` });
    });
    if (errors.length > 0) throw new AgentSignatureError(errors.sort((a, b) => a.i - b.i).map(({ field, message }) => ({ field, message })));
  }

  /** An entry's agent signature against the company's register now (the entry verification's `agent_signature`). */
  async stateOf(companyId: string, entry: LedgerEntry): Promise<AgentSignatureState> {
    if (!entry.agent_key_id && !entry.agent_signature) return { state: 'none' };
    const keys = entry.agent_key_id ? await this.deps.store.byIds(companyId, [entry.agent_key_id]) : [];
    return agentSignatureState(entry as Parameters<typeof agentSignatureState>[0], keys.map(asAgentKey));
  }

  /** The register entries for these key ids, as bundles and the verifier read them. */
  async registerOf(companyId: string, keyIds: string[]): Promise<AgentKey[]> {
    return (await this.deps.store.byIds(companyId, keyIds)).map(asAgentKey).sort((a, b) => a.key_id.localeCompare(b.key_id));
  }
}
