// Every environment variable the service reads, its default and what it means, as the README's
// configuration table and `audit-ledger env-example` show them (a test keeps the three in step).
// Reading and checking them is config.ts.

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
    name: 'LEDGER_PKCS11_MODULE',
    default: '(unset: no token)',
    description: 'The PKCS#11 library of a hardware token or HSM holding Ed25519 signing keys (docs/transparency.md, "Key custody"), e.g. `/usr/lib/softhsm/libsofthsm2.so`. Needs the token label and PIN below.',
  },
  { name: 'LEDGER_PKCS11_TOKEN_LABEL', default: '(unset)', description: 'The label of the token holding the keys.' },
  { name: 'LEDGER_PKCS11_PIN_FILE', default: '(unset)', description: 'A file holding the token\'s user PIN (preferred over the variable).' },
  { name: 'LEDGER_PKCS11_PIN', default: '(unset)', description: 'The token\'s user PIN.' },
  {
    name: 'LEDGER_PKCS11_KEY_LABEL',
    default: '(unset)',
    description: 'Start signing with the token\'s Ed25519 key pair of this label (CKM_EDDSA; the private key never leaves the token), in place of `LEDGER_SIGNING_KEY_FILE`. A running service moves to or from a token key by a signed rotation (`POST /api/v1/integrity/keys/rotate` with `pkcs11_key_label`).',
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
    name: 'STREAM_ALLOW_PRIVATE',
    default: 'false',
    description: '`true` lets log stream destinations (syslog hosts, Splunk, Datadog and HTTPS URLs) be private, loopback or link-local addresses (refused by default, as webhooks are). A SIEM inside your network needs it.',
  },
  {
    name: 'STREAM_DELIVERY',
    default: 'on',
    description: '`off` stops this process from delivering log streams (another process on the same PostgreSQL, or this one after a restart with `on`, continues from each stream\'s cursor).',
  },
  {
    name: 'SEARCH_INDEX',
    default: 'on',
    description:
      '`off` drops the index of words inside events at start (SQLite FTS5, PostgreSQL GIN): every append costs less, the more so the larger the events (docs/performance.md, "Search"), and `GET /logs/search` answers 409 `search_index_off` to words (`where` conditions still work). `on` again rebuilds it at start from what is stored (erased content stays out). Set the same on every process of one database.',
  },
  { name: 'STREAM_TIMEOUT_MS', default: '10000', description: 'How long sending one log stream batch may take, 100–120000 ms (for Splunk, waiting for its acknowledgement too); a slower destination counts as a failed attempt and is retried.' },
  {
    name: 'STREAM_DIRECTORY',
    default: '$LEDGER_DATA_DIR/streams',
    description: 'Root of the `directory` log stream destinations: each stream writes its sealed segments to `<company_id>/<folder>` under it, the folder named in the stream (never a path outside it; two companies never share one).',
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
  { name: 'TSA_URL', default: '(unset: none)', description: 'An RFC 3161 Time Stamping Authority (docs/transparency.md, "External timestamps"): every TSA_INTERVAL_SECONDS each company\'s latest checkpoint, when it changed, is timestamped there; tokens go into evidence bundles and `GET /integrity/timestamps`.' },
  { name: 'TSA_INTERVAL_SECONDS', default: '3600', description: 'Seconds between timestamps of a company\'s latest checkpoint, 1–2678400.' },
  {
    name: 'COMPLIANCE_SUBJECT_FIELDS',
    default: 'subject_id',
    description: 'Comma-separated paths in `data` (member names joined by dots, e.g. `subject_id,customer.email`) where `POST /compliance/erasures` looks for a `subject`.',
  },
];
