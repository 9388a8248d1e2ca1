// Which erasure record accounts for an erased entry (docs/ledger-format.md §14, "The cases in
// between"): each case decided, so every verifier answers it the same way.
import { describe, expect, it } from 'vitest';
import { erasureRecordProblem } from '../src/content.js';

const company = '5b0c3a52-8d5e-4a47-9f0e-2a3c1d9b7e10';
const entry = { seq: 2, log_id: 'e-2', company_id: company, source: 'billing-agent' };
const record = { seq: 5, company_id: company, event_type: 'compliance.erasure', source: 'audit-ledger/admin', data: { log_ids: ['e-2'] } };

describe('erasureRecordProblem', () => {
  it('a later compliance.erasure record of audit-ledger/admin that lists the entry accounts for it', () => {
    expect(erasureRecordProblem(entry, record)).toBeNull();
  });

  it.each([
    ['no record', entry, undefined, /no erasure record/],
    ['a record of another company', entry, { ...record, company_id: 'other' }, /is not a compliance.erasure entry/],
    ['a record from another source', entry, { ...record, source: 'billing-agent' }, /is not a compliance.erasure entry/],
    ['a record before the entry', { ...entry, seq: 9 }, record, /precedes it/],
    ['a record that does not list it', entry, { ...record, data: { log_ids: ['e-3'] } }, /does not list it/],
    ['a record whose content is itself erased', entry, { ...record, data: null }, /does not list it/],
    ["the service's own entry, whatever the record says", { ...entry, source: 'audit-ledger/admin' }, record, /never erased/],
  ])('%s does not', (_name, e, r, why) => {
    expect(erasureRecordProblem(e, r)).toMatch(why);
  });
});
