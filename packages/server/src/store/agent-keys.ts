// Storage for each company's agent key register (docs/ledger-format.md §20): agents' own
// Ed25519 public keys with their periods. Every change is recorded in the administrators'
// trail by the service (agents/agent-keys.ts) before it is made here.
import type { Selectable } from 'kysely';
import type { DbHandle } from './handle.js';
import type { AgentKeysTable } from './schema.js';

export type AgentKeyRow = Selectable<AgentKeysTable>;

export class AgentKeyStore {
  constructor(private readonly store: DbHandle) {}

  private get db() {
    return this.store.db;
  }

  /** Stores a registration; false when the company already has this key (another request registered it first). */
  async insert(row: AgentKeyRow): Promise<boolean> {
    try {
      await this.db.insertInto('agent_keys').values(row).execute();
      return true;
    } catch (err) {
      if (this.store.uniqueViolation(err) === 'agent_keys_pk') return false;
      throw err;
    }
  }

  /** Removes a registration its trail entry could not be recorded for (agents/agent-keys.ts). */
  async remove(companyId: string, keyId: string): Promise<void> {
    await this.db.deleteFrom('agent_keys').where('company_id', '=', companyId).where('key_id', '=', keyId).execute();
  }

  /** The company's keys, oldest first; one agent's with agentId. */
  list(companyId: string, agentId?: string): Promise<AgentKeyRow[]> {
    let q = this.db.selectFrom('agent_keys').selectAll().where('company_id', '=', companyId);
    if (agentId !== undefined) q = q.where('agent_id', '=', agentId);
    return q.orderBy('registered_at').orderBy('key_id').execute();
  }

  /** The keys of these ids (in the company), in no order. */
  byIds(companyId: string, keyIds: string[]): Promise<AgentKeyRow[]> {
    if (keyIds.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('agent_keys').selectAll().where('company_id', '=', companyId).where('key_id', 'in', keyIds).execute();
  }

  get(companyId: string, keyId: string): Promise<AgentKeyRow | undefined> {
    return this.db.selectFrom('agent_keys').selectAll().where('company_id', '=', companyId).where('key_id', '=', keyId).executeTakeFirst();
  }

  /** Ends a key's period at `at` (revoked, or replaced); false when it had ended already. */
  async end(companyId: string, keyId: string, at: string, reason: string): Promise<boolean> {
    const r = await this.db.updateTable('agent_keys').set({ active_to: at, ended_reason: reason }).where('company_id', '=', companyId).where('key_id', '=', keyId).where('active_to', 'is', null).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }
}
