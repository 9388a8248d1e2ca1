// A company for the governance suites (governance.test.ts, separation-of-duties.test.ts): an
// admin, some reviewers, an auditor and an API key, with calls as each of them.
import type { Account, TestApp } from './app.js';

export async function reviewCompany(t: TestApp, reviewers: number) {
  const admin = await t.newAccount();
  const people: Account[] = [];
  for (let i = 0; i < reviewers; i++) people.push(await t.newAccount({ role: 'reviewer', company: admin.companyName }));
  const auditor = await t.newAccount({ role: 'auditor', company: admin.companyName });
  const { key } = await t.createKey(admin.token, 1_000_000);
  const as = (a: Account) => ({ authorization: `Bearer ${a.token}` });
  const agent = { 'x-api-key': key };
  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, headers: Record<string, string>, payload?: unknown) => t.inject({ method, url: `/api/v1${url}`, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
  return { admin, reviewers: people, auditor, key, as, agent, call };
}
