// Every environment variable the service reads, once: its name, kind, default, range and meaning.
// From this one table come the reader (config.ts reads each variable with its kind), the `Config`
// type (each setting's type is what its kind reads), the README's configuration table and
// `.env.example` (`audit-ledger env-example`, `audit-ledger config-table`; test/config.test.ts
// keeps both committed texts equal to what the table makes).
// Rules that span several variables (a TLS pair, the bootstrap admin, the PKCS#11 token, the
// OpenID provider, the witness quorum) are config.ts's; the variables they read are here.
import os from 'node:os';
import path from 'node:path';
import { parseWitnessKey } from '@audit-ledger/core';
import { type Setting, custom, flag, int, text } from './setting-kinds.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const urlOf = (schemes: string, pattern: RegExp) => (v: string) => (pattern.test(v) ? undefined : `must start with ${schemes}`);

/** The table, in the order the README and `.env.example` list it. Keys are the names the code reads them by. */
export const SETTINGS = {
  host: text('HOST', 'Address to listen on.', { default: '127.0.0.1' }),
  port: int('PORT', 'TCP port (0 picks a free port).', { default: 8080, min: 0, max: 65535 }),
  dataDir: custom('LEDGER_DATA_DIR', './data', 'Directory for the SQLite file and other local state.', (raw) => ({ value: path.resolve(raw ?? './data') })),
  databaseUrl: text('DATABASE_URL', '`postgres://` or `postgresql://` URL selects PostgreSQL; unset uses SQLite at `$LEDGER_DATA_DIR/ledger.db`.', {
    unset: 'SQLite',
    check: (v) => (/^postgres(ql)?:\/\//.test(v) ? undefined : 'must start with postgres:// or postgresql:// (leave it unset for SQLite)'),
  }),
  ledgerStore: custom(
    'LEDGER_STORE',
    'auto',
    '`auto`: SQLite without `DATABASE_URL`; with it, PostgreSQL, in Citus mode when the database is a Citus coordinator (the extension is there: the migrations distribute the schema by company, docs/scaling.md). `citus` insists on Citus: the service and `migrate` refuse a database without it. `postgres` never distributes, even where the extension is installed.',
    (raw) =>
      raw === undefined || ['auto', 'postgres', 'citus'].includes(raw)
        ? { value: (raw ?? 'auto') as 'auto' | 'postgres' | 'citus' }
        : { value: 'auto' as const, problem: `must be auto, postgres or citus, got "${raw}"` },
  ),
  redisUrl: text('REDIS_URL', '`redis://` or `rediss://` URL. When set, rate limits are shared by every process using it.', { check: urlOf('redis:// or rediss://', /^rediss?:\/\//) }),
  logLevel: custom('LOG_LEVEL', 'info', `One of ${LOG_LEVELS.join(', ')}.`, (raw) =>
    raw === undefined || (LOG_LEVELS as readonly string[]).includes(raw) ? { value: (raw ?? 'info') as LogLevel } : { value: 'info' as LogLevel, problem: `must be one of ${LOG_LEVELS.join(', ')}, got "${raw}"` },
  ),
  tlsCertFile: text('TLS_CERT_FILE', 'PEM certificate chain. With `TLS_KEY_FILE`, the service serves HTTPS itself.'),
  tlsKeyFile: text('TLS_KEY_FILE', 'PEM private key for `TLS_CERT_FILE`.'),
  accessTokenTtlSeconds: int('ACCESS_TOKEN_TTL_SECONDS', 'Lifetime of a login access token, in seconds.', { default: 3600, min: 60, max: 30 * 24 * 3600 }),
  sessionIdleTimeoutSeconds: int('SESSION_IDLE_TIMEOUT_SECONDS', 'A console session (cookie, from `POST /api/v1/auth/session`) ends after this many seconds without a request.', { default: 1800, min: 60, max: 24 * 3600 }),
  sessionMaxAgeSeconds: int('SESSION_MAX_AGE_SECONDS', 'A console session ends this many seconds after login whatever its activity.', { default: 43_200, min: 300, max: 7 * 24 * 3600 }),
  maxBodyBytes: int('MAX_BODY_BYTES', 'Largest accepted request body, in bytes; larger bodies get 413.', { default: 1024 * 1024, min: 1024, max: 100 * 1024 * 1024 }),
  maxEntryBytes: int(
    'MAX_ENTRY_BYTES',
    "Largest content of one entry (its `data` and extra fields as canonical JSON, UTF-8) on every ingestion path: a larger event is refused naming the cap (the event alone: a 400 naming its place, or a refused OTLP span or log record). An OTLP resource and scope are one entry, stored once and named by hash from each span, so they count once.",
    { default: 256 * 1024, min: 1024, max: 100 * 1024 * 1024 },
  ),
  maxBatchSize: int('MAX_BATCH_SIZE', 'Most events in one `POST /api/v1/logs/batch`; larger batches get 413.', { default: 1000, min: 1, max: 100_000 }),
  signingWorkers: int(
    'LEDGER_SIGNING_WORKERS',
    'Worker threads that sign entries off the request thread; 0 signs on the request thread. (SQLite also runs one writer thread for appends, which signs groups of up to 64 entries itself.)',
    { default: () => Math.max(1, os.availableParallelism() - 1), shown: 'cores − 1, at least 1', min: 0, max: 64 },
  ),
  signingKeyFile: text(
    'LEDGER_SIGNING_KEY_FILE',
    'Ed25519 private key (PKCS#8 PEM) that signs entries. Unset: `$LEDGER_DATA_DIR/signing-key.pem`, generated with mode 0600 on first start. Give every process on one PostgreSQL the same key.',
    { path: true },
  ),
  pkcs11Module: text(
    'LEDGER_PKCS11_MODULE',
    'The PKCS#11 library of a hardware token or HSM holding Ed25519 signing keys (docs/transparency.md, "Key custody"), e.g. `/usr/lib/softhsm/libsofthsm2.so`. Needs the token label and PIN below.',
    { unset: 'no token', path: true },
  ),
  pkcs11TokenLabel: text('LEDGER_PKCS11_TOKEN_LABEL', 'The label of the token holding the keys.'),
  pkcs11PinFile: text('LEDGER_PKCS11_PIN_FILE', "A file holding the token's user PIN (preferred over the variable).", { path: true }),
  pkcs11Pin: text('LEDGER_PKCS11_PIN', "The token's user PIN."),
  pkcs11KeyLabel: text(
    'LEDGER_PKCS11_KEY_LABEL',
    "Start signing with the token's Ed25519 key pair of this label (CKM_EDDSA; the private key never leaves the token), in place of `LEDGER_SIGNING_KEY_FILE`. A running service moves to or from a token key by a signed rotation (`POST /api/v1/integrity/keys/rotate` with `pkcs11_key_label`).",
  ),
  bootstrapCompany: text('LEDGER_BOOTSTRAP_COMPANY', 'Company created on first start when the store has no user yet (see the next two).', { default: 'default' }),
  bootstrapEmail: text('LEDGER_BOOTSTRAP_EMAIL', 'Email of the first admin user.'),
  bootstrapPassword: text('LEDGER_BOOTSTRAP_PASSWORD', 'Password of the first admin user, at least 12 characters. Used only while the store has no user.', { untrimmed: true }),
  ledgerOrigin: text(
    'LEDGER_ORIGIN',
    'Name of this ledger in signed checkpoints (C2SP key name; origin line `<LEDGER_ORIGIN>/<company_id>`). Letters, digits and `.-_/:`. Set it once: auditors pin it.',
    { default: 'audit-ledger.local', check: (v) => (/^[A-Za-z0-9._:/-]{1,200}$/.test(v) ? undefined : `may hold only letters, digits and . - _ / : (at most 200), got "${v}"`) },
  ),
  checkpointIntervalMs: int('CHECKPOINT_INTERVAL_MS', 'A company gets a new signed checkpoint at most this often, in milliseconds (0 signs one after every append group). New entries are covered within this time.', { default: 1000, min: 0, max: 3_600_000 }),
  integrityVerifyIntervalSeconds: int('INTEGRITY_VERIFY_INTERVAL_SECONDS', 'How often the background verifier checks new entries of every company, in seconds; 0 turns it off.', { default: 300, min: 0, max: 86_400 }),
  verifyWorkers: int(
    'VERIFY_WORKERS',
    'Worker threads a full verification job reads and checks its entries in, each with its own database connection; 0 runs it on the main thread. Background passes always run on the main thread.',
    { default: () => os.availableParallelism(), shown: 'cores', min: 0, max: 64 },
  ),
  stalenessMaxAge: custom(
    'STALENESS_MAX_AGE_SECONDS',
    '*=3600',
    'Max age of context sources that declare no `max_age_seconds`, by `source_type`: comma-separated `type=seconds`, `*` for every other type (e.g. `market_feed=30,policy_doc=604800,*=3600`). Leave `*` out to rate such sources `unknown`.',
    (raw) => {
      const value: Record<string, number> = {};
      for (const part of (raw ?? '*=3600').split(',').map((p) => p.trim()).filter(Boolean)) {
        const m = /^([A-Za-z0-9_.:*-]+)=(\d+(?:\.\d+)?)$/.exec(part);
        if (!m || Number(m[2]) <= 0) return { value, problem: `entries must look like type=seconds (seconds > 0), got "${part}"` };
        value[m[1] as string] = Number(m[2]);
      }
      return { value };
    },
  ),
  metricsToken: text(
    'METRICS_TOKEN',
    'When set, `GET /api/v1/metrics` requires `Authorization: Bearer <METRICS_TOKEN>` (at least 16 characters). Unset: metrics are served to loopback clients only.',
    { check: (v) => (v.length >= 16 ? undefined : 'must be at least 16 characters') },
  ),
  operatorToken: text(
    'LEDGER_OPERATOR_TOKEN',
    'When set (at least 32 characters), operator actions on the whole service are allowed with `Authorization: Bearer <LEDGER_OPERATOR_TOKEN>`: `POST /api/v1/integrity/keys/rotate` and `audit-ledger keys rotate`. Unset: they answer 403. Give every process the same token.',
    { check: (v) => (v.length >= 32 ? undefined : 'must be at least 32 characters') },
  ),
  secretsKeyFile: text(
    'LEDGER_SECRETS_KEY_FILE',
    'File holding the 32-byte key (base64) that encrypts webhook signing secrets at rest. Unset: `$LEDGER_DATA_DIR/secrets.key`, generated with mode 0600 on first start. Give every process on one PostgreSQL the same file.',
    { path: true },
  ),
  webhookAllowPrivate: flag('WEBHOOK_ALLOW_PRIVATE', '`true` lets webhook URLs resolve to private, loopback or link-local addresses (refused by default to prevent SSRF).', { default: false, words: ['true', 'false'] }),
  webhookTimeoutMs: int('WEBHOOK_TIMEOUT_MS', 'How long one webhook delivery attempt may take, in milliseconds; a slower receiver counts as a failed attempt and is retried.', { default: 10_000, min: 100, max: 60_000 }),
  webhookDelivery: flag('WEBHOOK_DELIVERY', '`off` stops this process from delivering webhooks (events and the outbox are still recorded; another process, or this one after a restart with `on`, delivers them).', { default: true, words: ['on', 'off'] }),
  streamAllowPrivate: flag(
    'STREAM_ALLOW_PRIVATE',
    '`true` lets log stream destinations (syslog hosts, Splunk, Datadog and HTTPS URLs) be private, loopback or link-local addresses (refused by default, as webhooks are). A SIEM inside your network needs it.',
    { default: false, words: ['true', 'false'] },
  ),
  streamDelivery: flag('STREAM_DELIVERY', "`off` stops this process from delivering log streams (another process on the same PostgreSQL, or this one after a restart with `on`, continues from each stream's cursor).", { default: true, words: ['on', 'off'] }),
  searchIndex: flag(
    'SEARCH_INDEX',
    '`on` keeps the index of words inside events that `GET /logs/search` finds them by, after each commit, in batches, off the request thread (SQLite: `ledger.search.db` beside the ledger; PostgreSQL: `log_search`), so appends never wait for it; answers say how far it has caught up (`indexed_seq`). `off` removes it at start and `GET /logs/search` answers 409 `search_index_off` to words (`where` conditions still work); `on` again rebuilds it from what is stored (erased content stays out). Set the same on every process of one database.',
    { default: true, words: ['on', 'off'] },
  ),
  streamTimeoutMs: int('STREAM_TIMEOUT_MS', 'How long sending one log stream batch may take, in milliseconds (for Splunk, waiting for its acknowledgement too); a slower destination counts as a failed attempt and is retried.', { default: 10_000, min: 100, max: 120_000 }),
  streamDirectory: text(
    'STREAM_DIRECTORY',
    'Root of the `directory` log stream destinations: each stream writes its sealed segments to `<company_id>/<folder>` under it, the folder named in the stream (never a path outside it; two companies never share one).',
    { unset: '$LEDGER_DATA_DIR/streams', path: true },
  ),
  retentionIntervalSeconds: int('RETENTION_INTERVAL_SECONDS', 'Seconds between runs of the retention job (docs/compliance.md), which also finishes erasures a crash interrupted; 0 turns it off in this process. One process at a time runs it per company.', { default: 3600, min: 0, max: 7 * 86_400 }),
  retentionBatchSize: int('RETENTION_BATCH_SIZE', 'Entries erased per retention batch; each batch is one `compliance.erasure` entry.', { default: 1000, min: 1, max: 1000 }),
  witnesses: custom(
    'WITNESSES',
    '(unset: none)',
    'Independent witnesses (docs/compliance.md, "Witnesses"): comma-separated `URL VERIFIER_KEY` pairs, e.g. `https://w1.example/witness w1.example/w1+1a2b3c4d+BAo…`. Every checkpoint is submitted to each with a consistency proof; their cosignatures are kept and served with the checkpoint.',
    (raw) => {
      const value: Array<{ url: string; verifierKey: string; name: string }> = [];
      for (const entry of (raw ?? '').split(',').map((e) => e.trim()).filter((e) => e !== '')) {
        const [url, vkey, ...rest] = entry.split(/\s+/);
        let name: string;
        try {
          name = parseWitnessKey(vkey ?? '').name;
        } catch (err) {
          return { value, problem: (err as Error).message };
        }
        if (!url || !/^https?:\/\//.test(url) || rest.length > 0) return { value, problem: `entries are "URL VERIFIER_KEY" separated by commas, got "${entry}"` };
        value.push({ url: url.replace(/\/+$/, ''), verifierKey: vkey as string, name });
      }
      return { value };
    },
  ),
  oidcIssuer: text('OIDC_ISSUER', 'OpenID Connect provider URL (its discovery document is read from `/.well-known/openid-configuration`): enables "Sign in with single sign-on" in the console (authorization code with PKCE). Needs the OIDC variables below.', {
    unset: 'local passwords only',
    check: (v) => (/^https?:\/\//.test(v) ? undefined : "must be the provider's https URL"),
  }),
  oidcClientId: text('OIDC_CLIENT_ID', 'The client id registered at the provider.'),
  oidcClientSecret: text('OIDC_CLIENT_SECRET', 'The client secret (or `OIDC_CLIENT_SECRET_FILE`, a file holding it).', { unset: 'a public client' }),
  oidcClientSecretFile: text('OIDC_CLIENT_SECRET_FILE', 'A file holding the client secret (preferred over the variable).', { path: true }),
  oidcRedirectUri: text('OIDC_REDIRECT_URI', "This service's public URL followed by `/api/v1/auth/oidc/callback`, registered at the provider."),
  oidcCompany: text('OIDC_COMPANY', "The company the provider's users belong to (created if missing); a user signing in the first time is created in it, recorded as `user.created` (via `sso`)."),
  oidcAllowedDomains: text('OIDC_ALLOWED_DOMAINS', 'Email domains allowed in, comma-separated; the provider must say the email is verified.'),
  oidcRoleClaim: text('OIDC_ROLE_CLAIM', 'The ID token claim (a string or a list) whose values map to roles.', { default: 'groups' }),
  oidcRoleMap: text('OIDC_ROLE_MAP', 'claim-value=role pairs, comma-separated (`ledger-admins=admin,risk=reviewer,audit=auditor`); the first value that maps gives the role, at every sign-in (a change is recorded as `user.role_changed`).'),
  oidcDefaultRole: text('OIDC_DEFAULT_ROLE', 'The role of a user none of whose values map; unset, such a user is refused.', {
    unset: 'refused',
    check: (v) => (['admin', 'reviewer', 'auditor'].includes(v) ? undefined : 'must be admin, reviewer or auditor'),
  }),
  oidcName: text('OIDC_NAME', "The provider's name on the console's sign-in button.", { default: 'single sign-on' }),
  localLogin: flag('LOCAL_LOGIN', '`off`: local passwords are refused (`/auth/login`, `/auth/session`), single sign-on only; the `audit-ledger users create` command still works for the operator.', { default: true, words: ['on', 'off'] }),
  witnessQuorum: text('WITNESS_QUORUM', 'How many witnesses must cosign a checkpoint for it to count as witnessed (integrity status and metrics), from 0 to the number of `WITNESSES`.', { unset: 'all witnesses' }),
  tsaUrl: text(
    'TSA_URL',
    "An RFC 3161 Time Stamping Authority (docs/transparency.md, \"External timestamps\"): every TSA_INTERVAL_SECONDS each company's latest checkpoint, when it changed, is timestamped there; tokens go into evidence bundles and `GET /integrity/timestamps`.",
    { unset: 'none', check: (v) => (/^https?:\/\/[^\s]+$/.test(v) ? undefined : `must be an http(s) URL, got "${v}"`) },
  ),
  witnessAllowPrivate: flag(
    'WITNESS_ALLOW_PRIVATE',
    '`true` lets `WITNESSES` and `TSA_URL` be private, loopback or link-local addresses (refused by default: every outbound call is under one address policy, checked again by the connection itself). A witness or TSA inside your network needs it.',
    { default: false, words: ['true', 'false'] },
  ),
  tsaIntervalSeconds: int('TSA_INTERVAL_SECONDS', "Seconds between timestamps of a company's latest checkpoint.", { default: 3600, min: 1, max: 31 * 86_400 }),
  subjectFields: custom(
    'COMPLIANCE_SUBJECT_FIELDS',
    'subject_id',
    'Comma-separated paths in `data` (member names joined by dots, e.g. `subject_id,customer.email`) where `POST /compliance/erasures` looks for a `subject`.',
    (raw) => {
      const value = (raw ?? 'subject_id')
        .split(',')
        .map((f) => f.trim())
        .filter((f) => f !== '')
        .map((f) => f.split('.'));
      return value.some((p) => p.some((m) => !/^[A-Za-z0-9_-]{1,100}$/.test(m)))
        ? { value, problem: 'must be comma-separated paths of member names (letters, digits, _ and -) joined by dots, e.g. subject_id,customer.email' }
        : { value };
    },
  ),
} satisfies Record<string, Setting<unknown>>;

/** What each setting reads to: the type of every variable, from its kind. */
export type Settings = { [K in keyof typeof SETTINGS]: ReturnType<(typeof SETTINGS)[K]['read']>['value'] };

/** One row of the README table and one block of `.env.example`, as the table describes them. */
export interface VariableDoc {
  name: string;
  default: string;
  /** Whether `default` is a value as written in the variable, not words about one. */
  literal: boolean;
  description: string;
}

/** Every variable, in order, as documented. */
export const CONFIG_VARIABLES: VariableDoc[] = Object.values(SETTINGS).map((s: Setting<unknown>) => ({ name: s.name, default: s.shown, literal: s.literal, description: s.description }));
