// Migration 0011: the governance layer's read models (issue 29): approvals (requests and standing
// grants), reviewer teams, the checks ingestion records against them, the policy register and
// incidents. Every record of these is also a ledger entry (source `audit-ledger/governance`):
// these tables answer queries fast and serialize decisions, the ledger proves them. Never edit
// this migration once released.
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('approvals')
      .addColumn('company_id', 'text', (c) => c.notNull().references('companies.company_id'))
      .addColumn('approval_id', 'text', (c) => c.notNull())
      /** request (one action, asked by an agent) or standing (a scoped pre-approval an admin grants). */
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('tool', 'text')
      .addColumn('arguments', 'text')
      .addColumn('arguments_hash', 'text')
      .addColumn('constraints', 'text')
      .addColumn('trace_id', 'text')
      .addColumn('decision_id', 'text')
      .addColumn('agent_id', 'text')
      .addColumn('risk', 'text', (c) => c.notNull())
      .addColumn('reason', 'text')
      .addColumn('policy_id', 'text')
      .addColumn('policy_version', 'integer')
      .addColumn('team', 'text')
      .addColumn('assignee', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('required_approvals', 'integer', (c) => c.notNull())
      .addColumn('approvers', 'text', (c) => c.notNull())
      .addColumn('decided_by', 'text')
      .addColumn('decision_reason', 'text')
      .addColumn('requested_by', 'text', (c) => c.notNull())
      .addColumn('log_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('valid_from', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('decided_at', 'text')
      .addColumn('sla_due_at', 'text')
      .addColumn('escalated_at', 'text')
      .addColumn('max_uses', 'integer')
      .addColumn('uses', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('approvals_pk', ['company_id', 'approval_id'])
      .execute();
    // The reviewers' queue (status, then newest first) and the SLA sweep.
    await db.schema.createIndex('approvals_status_idx').on('approvals').columns(['company_id', 'status', 'created_at']).execute();
    await db.schema.createIndex('approvals_sla_idx').on('approvals').columns(['status', 'sla_due_at']).execute();

    await db.schema
      .createTable('approval_teams')
      .addColumn('company_id', 'text', (c) => c.notNull().references('companies.company_id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('members', 'text', (c) => c.notNull())
      .addColumn('sla_minutes', 'integer')
      .addColumn('escalation_target', 'text')
      .addColumn('match_actions', 'text', (c) => c.notNull())
      .addColumn('match_risks', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('approval_teams_pk', ['company_id', 'name'])
      .execute();

    // What ingestion found when an entry named an approval or a policy version.
    await db.schema
      .createTable('governance_checks')
      .addColumn('company_id', 'text', (c) => c.notNull().references('companies.company_id'))
      .addColumn('log_id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('subject_id', 'text', (c) => c.notNull())
      .addColumn('result', 'text', (c) => c.notNull())
      .addColumn('basis', 'text')
      .addColumn('detail', 'text')
      .addColumn('check_log_id', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('governance_checks_pk', ['company_id', 'log_id', 'kind'])
      .execute();
    await db.schema.createIndex('governance_checks_subject_idx').on('governance_checks').columns(['company_id', 'subject_id']).execute();

    await db.schema
      .createTable('policy_versions')
      .addColumn('company_id', 'text', (c) => c.notNull().references('companies.company_id'))
      .addColumn('policy_id', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('format', 'text', (c) => c.notNull())
      .addColumn('content', 'text', (c) => c.notNull())
      .addColumn('content_hash', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addColumn('log_id', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('policy_versions_pk', ['company_id', 'policy_id', 'version'])
      .execute();
    await db.schema.createIndex('policy_versions_hash_idx').on('policy_versions').columns(['company_id', 'content_hash']).execute();

    await db.schema
      .createTable('incidents')
      .addColumn('company_id', 'text', (c) => c.notNull().references('companies.company_id'))
      .addColumn('incident_id', 'text', (c) => c.notNull())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('severity', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('assignee', 'text')
      .addColumn('links', 'text', (c) => c.notNull())
      .addColumn('opened_by', 'text', (c) => c.notNull())
      .addColumn('log_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('incidents_pk', ['company_id', 'incident_id'])
      .execute();
    await db.schema.createIndex('incidents_created_idx').on('incidents').columns(['company_id', 'created_at']).execute();

    // Each change to an incident (opened, assigned, commented, status, report), in order.
    await db.schema
      .createTable('incident_notes')
      .addColumn('company_id', 'text', (c) => c.notNull().references('companies.company_id'))
      .addColumn('incident_id', 'text', (c) => c.notNull())
      .addColumn('note_id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('actor', 'text', (c) => c.notNull())
      .addColumn('log_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('incident_notes_pk', ['company_id', 'incident_id', 'note_id'])
      .execute();

    await db.schema
      .createTable('incident_reports')
      .addColumn('company_id', 'text', (c) => c.notNull().references('companies.company_id'))
      .addColumn('report_id', 'text', (c) => c.notNull())
      .addColumn('incident_id', 'text', (c) => c.notNull())
      .addColumn('document', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('incident_reports_pk', ['company_id', 'report_id'])
      .execute();
  },
};
