// The company's integration API key, without HTTP: created (shown once, stored hashed, one active
// per company), listed, revoked; each change is a trail entry and a webhook event. The route
// (routes/api-keys.ts) takes the user's principal, calls one method and shapes the answer.
import { randomUUID } from 'node:crypto';
import { type AdminTrail } from '../ingestion/recorder.js';
import { actorOf } from './authenticate.js';
import { NotFoundError } from '../kernel/domain-error.js';
import type { EventSink } from '../kernel/events.js';
import type { AccountStore, ApiKey } from '../store/accounts.js';

/** A key as the service keeps it (its view is the route's). */
export type { ApiKey };
import { iso } from '../kernel/time.js';
import type { Principal } from './authenticate.js';
import { API_KEY_PREFIX, hashSecret, KEY_PREFIX_LENGTH, newSecret } from './secrets.js';

export interface ApiKeysDeps {
  accounts: AccountStore;
  trail: Pick<AdminTrail, 'record'>;
  events: EventSink;
  clock: () => number;
  /** New key ids (random UUIDs unless a test supplies its own). */
  newId?: () => string;
}

const creatorOf = (p: Principal) => (p.kind === 'user' ? p.userId : p.keyId);

export class ApiKeys {
  constructor(private readonly deps: ApiKeysDeps) {}

  /** A new key (the secret is in the answer only); 409 active_key_exists while another is active. */
  async create(p: Principal, input: { name: string; rate_limit_per_minute: number }): Promise<{ row: ApiKey; key: string }> {
    const { accounts, trail, events, clock } = this.deps;
    const key = newSecret(API_KEY_PREFIX);
    const row = await accounts.insertApiKey({
      company_id: p.companyId,
      key_id: (this.deps.newId ?? randomUUID)(),
      name: input.name,
      key_prefix: key.slice(0, KEY_PREFIX_LENGTH),
      key_hash: hashSecret(key),
      rate_limit_per_minute: input.rate_limit_per_minute,
      created_at: iso(clock()),
      created_by: creatorOf(p),
    });
    const described = { key_id: row.key_id, name: row.name, key_prefix: row.key_prefix, rate_limit_per_minute: row.rate_limit_per_minute };
    await trail.record(p.companyId, 'api_key.created', actorOf(p), described);
    await events.emit(p.companyId, 'api_key.created', { ...described, created_by: row.created_by });
    return { row, key };
  }

  list(companyId: string): Promise<ApiKey[]> {
    return this.deps.accounts.listApiKeys(companyId);
  }

  /** Revokes a key of the caller's company; revoking a revoked key changes and reports nothing. */
  async revoke(p: Principal, keyId: string): Promise<void> {
    const { accounts, trail, events, clock } = this.deps;
    const before = await accounts.getApiKey(p.companyId, keyId);
    const revoked = await accounts.revokeApiKey(p.companyId, keyId, iso(clock()));
    if (!revoked) throw new NotFoundError(`No API key ${keyId}`);
    if (before?.status !== 'active') return;
    const described = { key_id: revoked.key_id, name: revoked.name, key_prefix: revoked.key_prefix };
    await trail.record(p.companyId, 'api_key.revoked', actorOf(p), described);
    await events.emit(p.companyId, 'api_key.revoked', { ...described, revoked_by: creatorOf(p) });
  }
}
