// Agents that sign their own events (docs/ledger-format.md §20): the agent holds an Ed25519 key;
// each event is signed as the service will store it, before it leaves the process, so the ledger
// can show the agent said it and not only the operator. Web Crypto: Node, browsers, Deno and Bun.
import { agentKeyProofMessage, agentSignedMessage, type AgentSignedEvent, ENVELOPE_FIELDS, type JsonObject, keyIdOf, toBase64 } from '@audit-ledger/core';

/** An event as the client sends it (client.ts's AuditEvent has this shape). */
type EventToSign = { event_type: string; data: JsonObject; [field: string]: unknown };

/** What signs an agent's events: its key id, its public key (what an admin registers) and a signing function. */
export interface AgentSigner {
  /** The agent_id its events carry (the key is registered for this agent). */
  agentId: string;
  /** agent_key_id: the first 16 hex characters of SHA-256 over the raw public key. */
  keyId: string;
  /** The raw 32-byte public key in base64: the `public_key` of POST /api/v1/agent-keys. */
  publicKey: string;
  /** Ed25519 over the message; a key in an agent-side HSM or key service can stand behind this. */
  sign(message: Uint8Array): Promise<Uint8Array>;
}

function pemBody(pem: string): Uint8Array<ArrayBuffer> {
  const b64 = pem.replace(/-----(BEGIN|END) PRIVATE KEY-----/g, '').replace(/\s+/g, '');
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

/** A signer from an Ed25519 private key in PKCS#8 PEM (`openssl genpkey -algorithm ed25519`), held by Web Crypto. */
export async function agentSigner(agentId: string, privateKeyPem: string): Promise<AgentSigner> {
  const key = await crypto.subtle.importKey('pkcs8', pemBody(privateKeyPem), { name: 'Ed25519' }, true, ['sign']);
  const jwk = await crypto.subtle.exportKey('jwk', key);
  if (typeof jwk.x !== 'string') throw new Error('not an Ed25519 private key');
  const raw = Uint8Array.from(atob(jwk.x.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
  return { agentId, keyId: keyIdOf(raw), publicKey: toBase64(raw), sign: async (message) => new Uint8Array(await crypto.subtle.sign('Ed25519', key, message as Uint8Array<ArrayBuffer>)) };
}

/** Fields the service keeps as they are; any other top-level field goes into the entry's `extra`. */
const KNOWN = new Set<string>(['event_type', 'data', 'payload', 'event_id', 'agent_key_id', 'agent_signature', ...ENVELOPE_FIELDS]);

/** The event as its entry will store it: payload as data, other fields in extra, envelope values as strings. */
export function storedView(event: EventToSign): AgentSignedEvent {
  const extra: JsonObject = {};
  for (const [k, v] of Object.entries(event)) if (!KNOWN.has(k) && v !== undefined) extra[k] = v as JsonObject[string];
  const view: Record<string, unknown> = { event_type: event.event_type, data: event.data ?? (event as { payload?: JsonObject }).payload, extra: Object.keys(extra).length > 0 ? extra : null, event_id: event.event_id ?? null };
  for (const f of ENVELOPE_FIELDS) {
    const v = (event as Record<string, unknown>)[f];
    view[f] = v === undefined || v === null ? null : String(v);
  }
  return view as AgentSignedEvent;
}

/**
 * The event with the agent's signature: agent_id set to the signer's (an event naming another
 * agent is refused here, as the service would), agent_key_id and agent_signature added.
 */
export async function signAgentEvent<E extends EventToSign>(event: E, signer: AgentSigner): Promise<E & { agent_id: string; agent_key_id: string; agent_signature: string }> {
  if (event.agent_id !== undefined && event.agent_id !== null && event.agent_id !== signer.agentId) throw new Error(`the event names agent_id ${event.agent_id}, but the signer's key is agent ${signer.agentId}'s`);
  const { agent_key_id: _k, agent_signature: _s, ...rest } = event;
  const unsigned = { ...rest, agent_id: signer.agentId } as unknown as E & { agent_id: string };
  const signature = await signer.sign(agentSignedMessage(storedView(unsigned)));
  return { ...unsigned, agent_key_id: signer.keyId, agent_signature: toBase64(signature) };
}

/**
 * The body of POST /api/v1/agent-keys for this signer in company `companyId` (GET /api/v1/auth/me
 * or the console's settings show it): the agent id, the public key, and the proof that the key's
 * holder asks for it (docs/ledger-format.md §20). The service refuses a key without a valid proof,
 * so nobody registers a key they do not hold. Add `replaces` for a rotation.
 */
export async function agentKeyRegistration(signer: AgentSigner, companyId: string): Promise<{ agent_id: string; public_key: string; proof: string }> {
  const body = { company_id: companyId, agent_id: signer.agentId, public_key: signer.publicKey };
  return { agent_id: signer.agentId, public_key: signer.publicKey, proof: toBase64(await signer.sign(agentKeyProofMessage(body))) };
}
