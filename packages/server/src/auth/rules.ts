// The credential rules routes declare, one definition each (authenticate.ts enforces them and
// writes them into the OpenAPI document). A route sets `config: READ` and the like.
import type { AuthRule } from './authenticate.js';

const rule = (auth: AuthRule) => ({ auth });

/** Reads of company data: the company's API key or any of its users. */
export const READ = rule({ accept: ['api_key', 'user'] });
/** Ingestion: only the company's API key. */
export const INGEST = rule({ accept: ['api_key'] });
/** Any signed-in user of the company, not an API key. */
export const USER = rule({ accept: ['user'] });
/** Administration: a user with the admin role. */
export const ADMIN = rule({ accept: ['user'], roles: ['admin'] });
/** Period reports: an admin or an auditor (a report is for regulators and auditors). */
export const REPORTS = rule({ accept: ['user'], roles: ['admin', 'auditor'] });
/** Human review writes (HITL rejections): the company's API key, an admin or a reviewer; never an auditor. */
export const REVIEW = rule({ accept: ['api_key', 'user'], roles: ['admin', 'reviewer'] });
/** Governance decisions (approve, reject, escalate): a person with the admin or reviewer role, by session or bearer token; never an API key. */
export const DECIDE = rule({ accept: ['user'], roles: ['admin', 'reviewer'] });
/** Who am I: a user's token first, or an API key (the order the OpenAPI document lists them). Reachable before a one-time password is replaced. */
export const ANY_CREDENTIAL = rule({ accept: ['user', 'api_key'], allowedBeforePasswordChange: true });
/** The signed-in user's own session and password: reachable before a one-time password is replaced. */
export const OWN_ACCOUNT = rule({ accept: ['user'], allowedBeforePasswordChange: true });
