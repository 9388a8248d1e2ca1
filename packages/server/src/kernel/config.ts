// The one configuration module: every setting comes from an environment variable,
// is validated once at start, and is documented in the README table (a test keeps
// the two in step).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseWitnessKey } from '@audit-ledger/core';

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** postgres://… selects PostgreSQL; undefined means SQLite in dataDir. */
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  logLevel: LogLevel;
  tls: { certFile: string; keyFile: string } | undefined;
  accessTokenTtlSeconds: number;
  /** Console sessions (cookie): ended after this long without a request. */
  sessionIdleTimeoutSeconds: number;
  /** Console sessions: ended this long after login, whatever happens. */
  sessionMaxAgeSeconds: number;
  maxBodyBytes: number;
  /** MAX_ENTRY_BYTES: the most content (data and extra, canonical JSON) one entry may hold. */
  maxEntryBytes: number;
  maxBatchSize: number;
  /** Worker threads that sign entries; 0 signs on the request thread. */
  signingWorkers: number;
  /** PKCS#8 PEM Ed25519 key; undefined means signing-key.pem in dataDir, created on first start. */
  signingKeyFile: string | undefined;
  /** A PKCS#11 token holding signing keys (docs/transparency.md, "Key custody"); undefined: none. keyLabel: the key to sign with, in place of the key file. */
  pkcs11: Pkcs11Config | undefined;
  bootstrap: { company: string; email: string; password: string } | undefined;
  /** Key name of signed checkpoints; the origin line is `<ledgerOrigin>/<company_id>`. */
  ledgerOrigin: string;
  /** Least time between two checkpoints of one company; 0 signs one after every append group. */
  checkpointIntervalMs: number;
  /** Seconds between background verifier runs; 0 turns the background verifier off. */
  integrityVerifyIntervalSeconds: number;
  verifyWorkers: number;
  /** Max age (seconds) of context by source type, for sources that declare none; "*" for any other type. */
  stalenessMaxAge: Record<string, number>;
  /** Bearer token GET /metrics requires; undefined: metrics are served to loopback clients only. */
  metricsToken: string | undefined;
  /** Bearer token for operator actions on the whole service (signing key rotation); unset turns them off. */
  operatorToken: string | undefined;
  /** AES key file for webhook secrets; undefined means secrets.key in dataDir, created on first start. */
  secretsKeyFile: string | undefined;
  webhookAllowPrivate: boolean;
  webhookTimeoutMs: number;
  /** Whether this process delivers webhooks (they are recorded either way). */
  webhookDelivery: boolean;
  /** Log streams (docs/integrations.md): destinations may be private addresses; this process delivers; the sealed-segment root. */
  streamAllowPrivate: boolean;
  streamDelivery: boolean;
  /** SEARCH_INDEX: keep the index of words inside events that GET /logs/search reads (store/search-index.ts). */
  searchIndex: boolean;
  streamTimeoutMs: number;
  streamDirectory: string;
  /** Seconds between retention runs; 0 turns the retention job off in this process. */
  retentionIntervalSeconds: number;
  /** Entries erased per retention batch (one erasure record each). */
  retentionBatchSize: number;
  /** Paths in data (dot-separated member names) where an erasure request's subject identifier is looked for. */
  subjectFields: string[][];
  /** Independent witnesses every checkpoint is submitted to (C2SP tlog-witness). */
  witnesses: Array<{ url: string; verifierKey: string; name: string }>;
  /** Cosignatures a checkpoint needs to count as witnessed (integrity status, metrics). */
  witnessQuorum: number;
  /** An RFC 3161 Time Stamping Authority each company's latest checkpoint is timestamped by (docs/transparency.md); undefined: none. */
  tsaUrl: string | undefined;
  /** Seconds between timestamps of a company's latest checkpoint (only when it changed). */
  tsaIntervalSeconds: number;
  /** OpenID Connect sign-in (docs/console.md, "Single sign-on"); undefined when OIDC_ISSUER is unset. */
  oidc: OidcConfig | undefined;
  /** Whether users may sign in with a local password (false: single sign-on only). */
  localLogin: boolean;
}


export { CONFIG_VARIABLES, LOG_LEVELS, type LogLevel, type VariableDoc } from './config-variables.js';
import { CONFIG_VARIABLES, LOG_LEVELS, type LogLevel } from './config-variables.js';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

export const MIN_PASSWORD_LENGTH = 12;

type Env = Record<string, string | undefined>;

/** Reads and validates the environment; throws ConfigError listing every bad value. */
/**
 * The text of .env.example: every variable CONFIG_VARIABLES lists, commented out with its default
 * (`audit-ledger env-example` prints it; a test keeps the committed file equal to it).
 */
export function envExample(): string {
  const wrap = (text: string) => {
    const lines: string[] = [];
    let line = '#';
    for (const word of text.replace(/`/g, '').split(/\s+/)) {
      if (line.length + word.length + 1 > 98) {
        lines.push(line);
        line = '#';
      }
      line += ` ${word}`;
    }
    return [...lines, line].join('\n');
  };
  const blocks = CONFIG_VARIABLES.map((v) => {
    const unset = v.default.startsWith('(') || v.default.includes(' ');
    return `${wrap(`${v.description}${unset ? ` Default: ${v.default}.` : ''}`)}\n# ${v.name}=${unset ? '' : v.default}`;
  });
  return `# audit-ledger configuration: every environment variable the service reads, with its default.
# Generated from packages/server/src/kernel/config.ts by \`audit-ledger env-example\`; a test keeps it
# in step. Copy to .env and uncomment what you set (compose.yaml reads the variables it names).

${blocks.join('\n\n')}
`;
}

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const get = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const int = (name: string, def: number, min: number, max: number): number => {
    const raw = get(name);
    if (raw === undefined) return def;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
      return def;
    }
    return Number(raw);
  };

  const databaseUrl = get('DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push('DATABASE_URL must start with postgres:// or postgresql:// (leave it unset for SQLite)');
  }
  const redisUrl = get('REDIS_URL');
  if (redisUrl !== undefined && !/^rediss?:\/\//.test(redisUrl)) {
    problems.push('REDIS_URL must start with redis:// or rediss://');
  }
  const logLevel = (get('LOG_LEVEL') ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);

  const certFile = get('TLS_CERT_FILE');
  const keyFile = get('TLS_KEY_FILE');
  if ((certFile === undefined) !== (keyFile === undefined)) {
    problems.push('TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  }

  const email = get('LEDGER_BOOTSTRAP_EMAIL');
  const password = env.LEDGER_BOOTSTRAP_PASSWORD; // not trimmed: spaces may be part of it
  let bootstrap: Config['bootstrap'];
  if ((email === undefined) !== (password === undefined || password === '')) {
    problems.push('LEDGER_BOOTSTRAP_EMAIL and LEDGER_BOOTSTRAP_PASSWORD must be set together');
  } else if (email !== undefined && password !== undefined) {
    if (!isPlausibleEmail(email)) problems.push(`LEDGER_BOOTSTRAP_EMAIL is not an email address: "${email}"`);
    if (password.length < MIN_PASSWORD_LENGTH) {
      problems.push(`LEDGER_BOOTSTRAP_PASSWORD must be at least ${MIN_PASSWORD_LENGTH} characters`);
    }
    bootstrap = { company: get('LEDGER_BOOTSTRAP_COMPANY') ?? 'default', email, password };
  }

  const ledgerOrigin = get('LEDGER_ORIGIN') ?? 'audit-ledger.local';
  if (!/^[A-Za-z0-9._:/-]{1,200}$/.test(ledgerOrigin)) {
    problems.push(`LEDGER_ORIGIN may hold only letters, digits and . - _ / : (at most 200), got "${ledgerOrigin}"`);
  }

  const stalenessMaxAge: Record<string, number> = {};
  for (const part of (get('STALENESS_MAX_AGE_SECONDS') ?? '*=3600').split(',').map((p) => p.trim()).filter(Boolean)) {
    const m = /^([A-Za-z0-9_.:*-]+)=(\d+(?:\.\d+)?)$/.exec(part);
    if (!m || Number(m[2]) <= 0) problems.push(`STALENESS_MAX_AGE_SECONDS entries must look like type=seconds (seconds > 0), got "${part}"`);
    else stalenessMaxAge[m[1] as string] = Number(m[2]);
  }

  const bool = (name: string, def: boolean, yes = 'true', no = 'false'): boolean => {
    const raw = get(name);
    if (raw === undefined) return def;
    if (raw === yes) return true;
    if (raw === no) return false;
    problems.push(`${name} must be ${yes} or ${no}, got "${raw}"`);
    return def;
  };
  const metricsToken = get('METRICS_TOKEN');
  if (metricsToken !== undefined && metricsToken.length < 16) problems.push('METRICS_TOKEN must be at least 16 characters');
  const operatorToken = get('LEDGER_OPERATOR_TOKEN');
  if (operatorToken !== undefined && operatorToken.length < 32) problems.push('LEDGER_OPERATOR_TOKEN must be at least 32 characters');

  const subjectFields = (get('COMPLIANCE_SUBJECT_FIELDS') ?? 'subject_id')
    .split(',')
    .map((f) => f.trim())
    .filter((f) => f !== '')
    .map((f) => f.split('.'));
  if (subjectFields.some((p) => p.some((m) => !/^[A-Za-z0-9_-]{1,100}$/.test(m)))) problems.push('COMPLIANCE_SUBJECT_FIELDS must be comma-separated paths of member names (letters, digits, _ and -) joined by dots, e.g. subject_id,customer.email');

  const witnesses: Config['witnesses'] = [];
  for (const entry of (get('WITNESSES') ?? '').split(',').map((e) => e.trim()).filter((e) => e !== '')) {
    const [url, vkey, ...rest] = entry.split(/\s+/);
    let name: string | undefined;
    try {
      name = parseWitnessKey(vkey ?? '').name;
    } catch (err) {
      problems.push(`WITNESSES: ${(err as Error).message}`);
    }
    if (!url || !/^https?:\/\//.test(url) || rest.length > 0) problems.push(`WITNESSES entries are "URL VERIFIER_KEY" separated by commas, got "${entry}"`);
    else if (name !== undefined) witnesses.push({ url: url.replace(/\/+$/, ''), verifierKey: vkey as string, name });
  }
  const witnessQuorum = int('WITNESS_QUORUM', witnesses.length, 0, Math.max(witnesses.length, 0));
  const tsaUrl = get('TSA_URL');
  if (tsaUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(tsaUrl)) problems.push(`TSA_URL must be an http(s) URL, got "${tsaUrl}"`);

  let pkcs11: Pkcs11Config | undefined;
  const pkcs11Module = get('LEDGER_PKCS11_MODULE');
  if (pkcs11Module !== undefined) {
    const tokenLabel = get('LEDGER_PKCS11_TOKEN_LABEL');
    const pinFile = get('LEDGER_PKCS11_PIN_FILE');
    const pin = pinFile ? fs.readFileSync(path.resolve(pinFile), 'utf8').trim() : get('LEDGER_PKCS11_PIN');
    if (!tokenLabel) problems.push('LEDGER_PKCS11_TOKEN_LABEL (the label of the token holding the signing keys) is required with LEDGER_PKCS11_MODULE');
    if (!pin) problems.push('LEDGER_PKCS11_PIN_FILE or LEDGER_PKCS11_PIN (the token\'s user PIN) is required with LEDGER_PKCS11_MODULE');
    pkcs11 = { module: path.resolve(pkcs11Module), tokenLabel: tokenLabel ?? '', pin: pin ?? '', keyLabel: get('LEDGER_PKCS11_KEY_LABEL') };
  } else if (['LEDGER_PKCS11_TOKEN_LABEL', 'LEDGER_PKCS11_KEY_LABEL', 'LEDGER_PKCS11_PIN', 'LEDGER_PKCS11_PIN_FILE'].some((n) => get(n) !== undefined)) {
    problems.push('the LEDGER_PKCS11_ settings need LEDGER_PKCS11_MODULE (the path of the token\'s PKCS#11 library)');
  }
  if (pkcs11?.keyLabel !== undefined && get('LEDGER_SIGNING_KEY_FILE') !== undefined) problems.push('set LEDGER_PKCS11_KEY_LABEL or LEDGER_SIGNING_KEY_FILE, not both: the service starts with one signing key');

  let oidc: OidcConfig | undefined;
  const issuer = get('OIDC_ISSUER');
  if (issuer !== undefined) {
    const roles = ['admin', 'reviewer', 'auditor'] as const;
    const isRole = (r: string): r is (typeof roles)[number] => (roles as readonly string[]).includes(r);
    const roleMap: OidcConfig['roleMap'] = [];
    for (const pair of (get('OIDC_ROLE_MAP') ?? '').split(',').map((x) => x.trim()).filter(Boolean)) {
      const [value, role] = pair.split('=').map((x) => x.trim());
      if (!value || !role || !isRole(role)) problems.push(`OIDC_ROLE_MAP entries are claim-value=role (admin, reviewer or auditor) separated by commas, got "${pair}"`);
      else roleMap.push({ value, role });
    }
    const defaultRole = get('OIDC_DEFAULT_ROLE');
    if (defaultRole !== undefined && !isRole(defaultRole)) problems.push('OIDC_DEFAULT_ROLE must be admin, reviewer or auditor');
    const allowedDomains = (get('OIDC_ALLOWED_DOMAINS') ?? '').split(',').map((d) => d.trim().toLowerCase()).filter(Boolean);
    const clientId = get('OIDC_CLIENT_ID');
    const redirectUri = get('OIDC_REDIRECT_URI');
    const company = get('OIDC_COMPANY');
    if (!/^https?:\/\//.test(issuer)) problems.push('OIDC_ISSUER must be the provider\'s https URL');
    if (!clientId) problems.push('OIDC_CLIENT_ID is required with OIDC_ISSUER');
    if (!redirectUri || !/^https?:\/\/.+\/api\/v1\/auth\/oidc\/callback$/.test(redirectUri)) problems.push('OIDC_REDIRECT_URI must be this service\'s public URL followed by /api/v1/auth/oidc/callback');
    if (!company) problems.push('OIDC_COMPANY (the company users of this provider belong to) is required with OIDC_ISSUER');
    if (allowedDomains.length === 0) problems.push('OIDC_ALLOWED_DOMAINS (the email domains allowed in, comma-separated) is required with OIDC_ISSUER');
    const secretFile = get('OIDC_CLIENT_SECRET_FILE');
    const clientSecret = secretFile ? fs.readFileSync(path.resolve(secretFile), 'utf8').trim() : get('OIDC_CLIENT_SECRET');
    oidc = { issuer, clientId: clientId ?? '', clientSecret, redirectUri: redirectUri ?? '', company: company ?? '', allowedDomains, roleClaim: get('OIDC_ROLE_CLAIM') ?? 'groups', roleMap, defaultRole: defaultRole as OidcConfig['defaultRole'], name: get('OIDC_NAME') ?? 'single sign-on' };
  }
  const localLogin = bool('LOCAL_LOGIN', true, 'on', 'off');
  if (!localLogin && oidc === undefined) problems.push('LOCAL_LOGIN=off needs OIDC_ISSUER: nobody could sign in');

  const config: Config = {
    host: get('HOST') ?? '127.0.0.1',
    port: int('PORT', 8080, 0, 65535),
    dataDir: path.resolve(get('LEDGER_DATA_DIR') ?? './data'),
    databaseUrl,
    redisUrl,
    logLevel,
    tls: certFile && keyFile ? { certFile, keyFile } : undefined,
    accessTokenTtlSeconds: int('ACCESS_TOKEN_TTL_SECONDS', 3600, 60, 30 * 24 * 3600),
    sessionIdleTimeoutSeconds: int('SESSION_IDLE_TIMEOUT_SECONDS', 1800, 60, 24 * 3600),
    sessionMaxAgeSeconds: int('SESSION_MAX_AGE_SECONDS', 43_200, 300, 7 * 24 * 3600),
    maxBodyBytes: int('MAX_BODY_BYTES', 1024 * 1024, 1024, 100 * 1024 * 1024),
    maxEntryBytes: int('MAX_ENTRY_BYTES', 256 * 1024, 1024, 100 * 1024 * 1024),
    maxBatchSize: int('MAX_BATCH_SIZE', 1000, 1, 100_000),
    signingWorkers: int('LEDGER_SIGNING_WORKERS', Math.max(1, os.availableParallelism() - 1), 0, 64),
    signingKeyFile: get('LEDGER_SIGNING_KEY_FILE') ? path.resolve(get('LEDGER_SIGNING_KEY_FILE') as string) : undefined,
    pkcs11,
    bootstrap,
    ledgerOrigin,
    checkpointIntervalMs: int('CHECKPOINT_INTERVAL_MS', 1000, 0, 3_600_000),
    integrityVerifyIntervalSeconds: int('INTEGRITY_VERIFY_INTERVAL_SECONDS', 300, 0, 86_400),
    verifyWorkers: int('VERIFY_WORKERS', os.availableParallelism(), 0, 64),
    stalenessMaxAge,
    metricsToken,
    operatorToken,
    secretsKeyFile: get('LEDGER_SECRETS_KEY_FILE') ? path.resolve(get('LEDGER_SECRETS_KEY_FILE') as string) : undefined,
    webhookAllowPrivate: bool('WEBHOOK_ALLOW_PRIVATE', false),
    webhookTimeoutMs: int('WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
    webhookDelivery: bool('WEBHOOK_DELIVERY', true, 'on', 'off'),
    streamAllowPrivate: bool('STREAM_ALLOW_PRIVATE', false),
    streamDelivery: bool('STREAM_DELIVERY', true, 'on', 'off'),
    searchIndex: bool('SEARCH_INDEX', true, 'on', 'off'),
    streamTimeoutMs: int('STREAM_TIMEOUT_MS', 10_000, 100, 120_000),
    streamDirectory: path.resolve(get('STREAM_DIRECTORY') ?? path.join(get('LEDGER_DATA_DIR') ?? './data', 'streams')),
    retentionIntervalSeconds: int('RETENTION_INTERVAL_SECONDS', 3600, 0, 7 * 86_400),
    retentionBatchSize: int('RETENTION_BATCH_SIZE', 1000, 1, 1000),
    subjectFields,
    witnesses,
    witnessQuorum,
    tsaUrl,
    tsaIntervalSeconds: int('TSA_INTERVAL_SECONDS', 3600, 1, 31 * 86_400),
    oidc,
    localLogin,
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

export interface Pkcs11Config {
  /** The token's PKCS#11 library (SoftHSM2: /usr/lib/softhsm/libsofthsm2.so). */
  module: string;
  tokenLabel: string;
  /** The user PIN (from LEDGER_PKCS11_PIN_FILE, or the variable). */
  pin: string;
  /** The label of the Ed25519 key pair the service starts with, in place of the key file; undefined: the key file, or the store's active key. */
  keyLabel: string | undefined;
}

export interface OidcConfig {
  issuer: string;
  clientId: string;
  clientSecret: string | undefined;
  /** Where the provider sends the browser back: <public URL>/api/v1/auth/oidc/callback. */
  redirectUri: string;
  /** The company whose users sign in this way (created at first start like the bootstrap one). */
  company: string;
  /** Email domains allowed in (lowercase); an email must be verified by the provider. */
  allowedDomains: string[];
  /** The ID token claim holding roles or groups, and how its values map to roles (the first match wins). */
  roleClaim: string;
  roleMap: Array<{ value: string; role: 'admin' | 'reviewer' | 'auditor' }>;
  /** The role of a user none of whose values map (none: refused). */
  defaultRole: 'admin' | 'reviewer' | 'auditor' | undefined;
  /** The name on the sign-in button. */
  name: string;
}

export function isPlausibleEmail(s: string): boolean {
  return s.length <= 320 && /^[^\s@]+@[^\s@]+$/.test(s);
}
