// The policy register (docs/governance.md, "Policies"): each PUT of a policy makes a new
// immutable version, recorded as a `policy.version_created` entry that holds the exact text and
// its SHA-256 (so a bundle proves which text was in force). Putting the same text as the latest
// version again makes no new version. Versions count from 1, per policy, without gaps: a number is
// reserved in the register first (the primary key: two simultaneous PUTs cannot take the same
// one, the second tries the next), then its entry is appended (the reservation is given back if
// that fails), so every version has exactly one entry.
import type { TrailActor } from '../ingestion/recorder.js';
import { NotFoundError } from '../kernel/domain-error.js';
import type { EventSink } from '../kernel/events.js';
import { iso } from '../kernel/time.js';
import type { GovernanceStore, PolicyVersionRow } from '../store/governance.js';
import { textHash } from './record.js';
import type { Trail } from '../ingestion/recorder.js';

export interface PolicyInput {
  /** The policy's text exactly as it is enforced (a Rego or Cedar document, JSON, a rule list…). */
  content: string;
  /** What the text is: rego, cedar, json, yaml, text… (free, for people and diffs). */
  format?: string | undefined;
  description?: string | undefined;
}

export interface PolicyVersionView {
  policy_id: string;
  version: number;
  format: string;
  content_hash: string;
  description: string | null;
  created_at: string;
  created_by: TrailActor;
  log_id: string;
  content?: string;
}

export const versionView = (row: PolicyVersionRow, withContent: boolean): PolicyVersionView => ({
  policy_id: row.policy_id,
  version: row.version,
  format: row.format,
  content_hash: row.content_hash,
  description: row.description,
  created_at: row.created_at,
  created_by: JSON.parse(row.created_by) as TrailActor,
  log_id: row.log_id,
  ...(withContent ? { content: row.content } : {}),
});

export class Policies {
  constructor(private readonly deps: { store: GovernanceStore; recorder: Trail; events: EventSink; clock: () => number }) {}

  /** Registers a version; `created` is false when the text equals the latest version's (nothing new recorded). */
  async put(companyId: string, actor: TrailActor, policyId: string, input: PolicyInput): Promise<{ created: boolean; version: PolicyVersionView }> {
    const contentHash = textHash(input.content);
    const format = input.format ?? 'text';
    // Each attempt is a read and one insert; n simultaneous PUTs of one policy need at most n.
    for (let attempt = 0; attempt < 100; attempt++) {
      const latest = await this.deps.store.latestVersion(companyId, policyId);
      if (latest && latest.content_hash === contentHash && latest.format === format) return { created: false, version: versionView(latest, false) };
      const version = (latest?.version ?? 0) + 1;
      const row: PolicyVersionRow = { company_id: companyId, policy_id: policyId, version, format, content: input.content, content_hash: contentHash, description: input.description ?? null, created_at: iso(this.deps.clock()), created_by: JSON.stringify(actor), log_id: '' };
      if (!(await this.deps.store.insertVersion(row))) continue; // taken meanwhile: read the latest again
      let appended;
      try {
        appended = await this.deps.recorder.record(companyId, 'policy.version_created', actor, { policy_id: policyId, version, format, content_hash: contentHash, description: input.description ?? null, content: input.content });
      } catch (err) {
        await this.deps.store.deleteVersion(companyId, policyId, version).catch(() => undefined);
        throw err;
      }
      await this.deps.store.setVersionEntry(companyId, policyId, version, appended.log_id, appended.created_at);
      const stored = { ...row, log_id: appended.log_id, created_at: appended.created_at };
      await this.deps.events.emit(companyId, 'policy.version_created', { policy_id: policyId, version, content_hash: contentHash, log_id: appended.log_id });
      return { created: true, version: versionView(stored, false) };
    }
    throw new Error(`policy ${policyId}: could not take a version number after 100 attempts`);
  }

  async list(companyId: string): Promise<Array<{ policy_id: string; latest_version: number }>> {
    return (await this.deps.store.listPolicies(companyId)).map((p) => ({ policy_id: p.policy_id, latest_version: p.versions }));
  }

  async versions(companyId: string, policyId: string): Promise<PolicyVersionView[]> {
    const rows = await this.deps.store.listVersions(companyId, policyId);
    if (rows.length === 0) throw new NotFoundError(`policy ${policyId} not found`);
    return rows.map((r) => versionView(r, false));
  }

  async version(companyId: string, policyId: string, version: number): Promise<PolicyVersionView> {
    const row = await this.deps.store.getVersion(companyId, policyId, version);
    if (!row) throw new NotFoundError(`policy ${policyId} has no version ${version}`);
    return versionView(row, true);
  }

  /** Whether a policy (and the version, when one is named) is registered. */
  async exists(companyId: string, policyId: string, version: number | undefined): Promise<boolean> {
    return version === undefined ? (await this.deps.store.latestVersion(companyId, policyId)) !== undefined : (await this.deps.store.getVersion(companyId, policyId, version)) !== undefined;
  }
}
