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
  /** OpenID Connect sign-in (docs/console.md, "Single sign-on"); undefined when OIDC_ISSUER is unset. */
  oidc: OidcConfig | undefined;
  /** Whether users may sign in with a local password (false: single sign-on only). */
  localLogin: boolean;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface VariableDoc {
  name: string;
  default: string;
  description: string;
}

/** What the README configuration table lists. */
export const CONFIG_VARIABLES: VariableDoc[] = [
  { name: 'HOST', default: '127.0.0.1', description: 'Address to listen on.' },
  { name: 'PORT', default: '8080', description: 'TCP port, 0–65535 (0 picks a free port).' },
  { name: 'LEDGER_DATA_DIR', default: './data', description: 'Directory for the SQLite file and other local state.' },
  {
    name: 'DATABASE_URL',
    default: '(unset: SQLite)',
    description: '`postgres://` or `postgresql://` URL selects PostgreSQL; unset uses SQLite at `$LEDGER_DATA_DIR/ledger.db`.',
  },
  {
    name: 'REDIS_URL',
    default: '(unset)',
    description: '`redis://` or `rediss://` URL. When set, rate limits are shared by every process using it.',
  },
  { name: 'LOG_LEVEL', default: 'info', description: `One of ${LOG_LEVELS.join(', ')}.` },
  {
    name: 'TLS_CERT_FILE',
    default: '(unset)',
    description: 'PEM certificate chain. With `TLS_KEY_FILE`, the service serves HTTPS itself.',
  },
  { name: 'TLS_KEY_FILE', default: '(unset)', description: 'PEM private key for `TLS_CERT_FILE`.' },
  {
    name: 'ACCESS_TOKEN_TTL_SECONDS',
    default: '3600',
    description: 'Lifetime of a login access token, 60–2592000.',
  },
  {
    name: 'SESSION_IDLE_TIMEOUT_SECONDS',
    default: '1800',
    description: 'A console session (cookie, from `POST /api/v1/auth/session`) ends after this many seconds without a request, 60–86400.',
  },
  {
    name: 'SESSION_MAX_AGE_SECONDS',
    default: '43200',
    description: 'A console session ends this many seconds after login whatever its activity, 300–604800.',
  },
  {
    name: 'MAX_BODY_BYTES',
    default: '1048576',
    description: 'Largest accepted request body; larger bodies get 413. 1024–104857600.',
  },
  {
    name: 'MAX_ENTRY_BYTES',
    default: '262144',
    description: "Largest content of one entry (its `data` and extra fields as canonical JSON, UTF-8) on every ingestion path: a larger event is refused naming the cap (the event alone: a 400 naming its place, or a refused OTLP span or log record). An OTLP resource and scope are one entry, stored once and named by hash from each span, so they count once. 1024–104857600.",
  },
  {
    name: 'MAX_BATCH_SIZE',
    default: '1000',
    description: 'Most events in one `POST /api/v1/logs/batch`; larger batches get 413. 1–100000.',
  },
  {
    name: 'LEDGER_SIGNING_WORKERS',
    default: 'cores − 1, at least 1',
    description: 'Worker threads that sign entries off the request thread, 0–64; 0 signs on the request thread. (SQLite also runs one writer thread for appends, which signs groups of up to 64 entries itself.)',
  },
  {
    name: 'LEDGER_SIGNING_KEY_FILE',
    default: '(unset)',
    description:
      'Ed25519 private key (PKCS#8 PEM) that signs entries. Unset: `$LEDGER_DATA_DIR/signing-key.pem`, generated with mode 0600 on first start. Give every process on one PostgreSQL the same key.',
  },
  {
    name: 'LEDGER_BOOTSTRAP_COMPANY',
    default: 'default',
    description: 'Company created on first start when the store has no user yet (see the next two).',
  },
  { name: 'LEDGER_BOOTSTRAP_EMAIL', default: '(unset)', description: 'Email of the first admin user.' },
  {
    name: 'LEDGER_BOOTSTRAP_PASSWORD',
    default: '(unset)',
    description: 'Password of the first admin user, at least 12 characters. Used only while the store has no user.',
  },
  {
    name: 'LEDGER_ORIGIN',
    default: 'audit-ledger.local',
    description:
      'Name of this ledger in signed checkpoints (C2SP key name; origin line `<LEDGER_ORIGIN>/<company_id>`). Letters, digits and `.-_/:`. Set it once: auditors pin it.',
  },
  {
    name: 'CHECKPOINT_INTERVAL_MS',
    default: '1000',
    description: 'A company gets a new signed checkpoint at most this often (0–3600000; 0 signs one after every append group). New entries are covered within this time.',
  },
  {
    name: 'INTEGRITY_VERIFY_INTERVAL_SECONDS',
    default: '300',
    description: 'How often the background verifier checks new entries of every company, 0–86400; 0 turns it off.',
  },
  {
    name: 'VERIFY_WORKERS',
    default: 'cores',
    description:
      'Worker threads a full verification job reads and checks its entries in, each with its own database connection, 0–64; 0 runs it on the main thread. Background passes always run on the main thread.',
  },
  {
    name: 'STALENESS_MAX_AGE_SECONDS',
    default: '*=3600',
    description:
      'Max age of context sources that declare no `max_age_seconds`, by `source_type`: comma-separated `type=seconds`, `*` for every other type (e.g. `market_feed=30,policy_doc=604800,*=3600`). Leave `*` out to rate such sources `unknown`.',
  },
  {
    name: 'METRICS_TOKEN',
    default: '(unset)',
    description: 'When set, `GET /api/v1/metrics` requires `Authorization: Bearer <METRICS_TOKEN>` (at least 16 characters). Unset: metrics are served to loopback clients only.',
  },
  {
    name: 'LEDGER_OPERATOR_TOKEN',
    default: '(unset)',
    description:
      'When set (at least 32 characters), operator actions on the whole service are allowed with `Authorization: Bearer <LEDGER_OPERATOR_TOKEN>`: `POST /api/v1/integrity/keys/rotate` and `audit-ledger keys rotate`. Unset: they answer 403. Give every process the same token.',
  },
  {
    name: 'LEDGER_SECRETS_KEY_FILE',
    default: '(unset)',
    description:
      'File holding the 32-byte key (base64) that encrypts webhook signing secrets at rest. Unset: `$LEDGER_DATA_DIR/secrets.key`, generated with mode 0600 on first start. Give every process on one PostgreSQL the same file.',
  },
  {
    name: 'WEBHOOK_ALLOW_PRIVATE',
    default: 'false',
    description: '`true` lets webhook URLs resolve to private, loopback or link-local addresses (refused by default to prevent SSRF).',
  },
  { name: 'WEBHOOK_TIMEOUT_MS', default: '10000', description: 'How long one webhook delivery attempt may take, 100–60000 ms; a slower receiver counts as a failed attempt and is retried.' },
  {
    name: 'WEBHOOK_DELIVERY',
    default: 'on',
    description: '`off` stops this process from delivering webhooks (events and the outbox are still recorded; another process, or this one after a restart with `on`, delivers them).',
  },
  {
    name: 'RETENTION_INTERVAL_SECONDS',
    default: '3600',
    description: 'Seconds between runs of the retention job (docs/compliance.md), which also finishes erasures a crash interrupted; 0 turns it off in this process. One process at a time runs it per company.',
  },
  { name: 'RETENTION_BATCH_SIZE', default: '1000', description: 'Entries erased per retention batch, 1–1000; each batch is one `compliance.erasure` entry.' },
  {
    name: 'WITNESSES',
    default: '(unset: none)',
    description:
      'Independent witnesses (docs/compliance.md, "Witnesses"): comma-separated `URL VERIFIER_KEY` pairs, e.g. `https://w1.example/witness w1.example/w1+1a2b3c4d+BAo…`. Every checkpoint is submitted to each with a consistency proof; their cosignatures are kept and served with the checkpoint.',
  },
  { name: 'OIDC_ISSUER', default: '(unset: local passwords only)', description: 'OpenID Connect provider URL (its discovery document is read from `/.well-known/openid-configuration`): enables "Sign in with single sign-on" in the console (authorization code with PKCE). Needs the OIDC variables below.' },
  { name: 'OIDC_CLIENT_ID', default: '(unset)', description: 'The client id registered at the provider.' },
  { name: 'OIDC_CLIENT_SECRET', default: '(unset: a public client)', description: 'The client secret (or `OIDC_CLIENT_SECRET_FILE`, a file holding it).' },
  { name: 'OIDC_CLIENT_SECRET_FILE', default: '(unset)', description: 'A file holding the client secret (preferred over the variable).' },
  { name: 'OIDC_REDIRECT_URI', default: '(unset)', description: "This service's public URL followed by `/api/v1/auth/oidc/callback`, registered at the provider." },
  { name: 'OIDC_COMPANY', default: '(unset)', description: 'The company the provider\'s users belong to (created if missing); a user signing in the first time is created in it, recorded as `user.created` (via `sso`).' },
  { name: 'OIDC_ALLOWED_DOMAINS', default: '(unset)', description: 'Email domains allowed in, comma-separated; the provider must say the email is verified.' },
  { name: 'OIDC_ROLE_CLAIM', default: 'groups', description: 'The ID token claim (a string or a list) whose values map to roles.' },
  { name: 'OIDC_ROLE_MAP', default: '(unset)', description: 'claim-value=role pairs, comma-separated (`ledger-admins=admin,risk=reviewer,audit=auditor`); the first value that maps gives the role, at every sign-in (a change is recorded as `user.role_changed`).' },
  { name: 'OIDC_DEFAULT_ROLE', default: '(unset: refused)', description: 'The role of a user none of whose values map; unset, such a user is refused.' },
  { name: 'OIDC_NAME', default: 'single sign-on', description: 'The provider\'s name on the console\'s sign-in button.' },
  { name: 'LOCAL_LOGIN', default: 'on', description: '`off`: local passwords are refused (`/auth/login`, `/auth/session`), single sign-on only; the `audit-ledger users create` command still works for the operator.' },
  { name: 'WITNESS_QUORUM', default: 'all witnesses', description: 'How many witnesses must cosign a checkpoint for it to count as witnessed (integrity status and metrics).' },
  {
    name: 'COMPLIANCE_SUBJECT_FIELDS',
    default: 'subject_id',
    description: 'Comma-separated paths in `data` (member names joined by dots, e.g. `subject_id,customer.email`) where `POST /compliance/erasures` looks for a `subject`.',
  },
];

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
    retentionIntervalSeconds: int('RETENTION_INTERVAL_SECONDS', 3600, 0, 7 * 86_400),
    retentionBatchSize: int('RETENTION_BATCH_SIZE', 1000, 1, 1000),
    subjectFields,
    witnesses,
    witnessQuorum,
    oidc,
    localLogin,
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
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
