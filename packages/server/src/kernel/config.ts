// The one configuration module: every setting comes from an environment variable, is read once at
// start by its kind in the one table (config-table.ts), which also makes the README table,
// `.env.example` and the types below. What spans several variables is checked here.
import fs from 'node:fs';
import path from 'node:path';
import { CONFIG_VARIABLES, type Settings, SETTINGS } from './config-table.js';

export { CONFIG_VARIABLES, LOG_LEVELS, type LogLevel, type Settings, type VariableDoc } from './config-table.js';

/** The variables that only make sense together: read by the table, composed into one setting each below. */
type Composed =
  | 'tlsCertFile'
  | 'tlsKeyFile'
  | `pkcs11${string}`
  | `bootstrap${string}`
  | `oidc${string}`
  | 'witnessQuorum'
  | 'streamDirectory';

/** The service's settings: the table's, with what spans several variables composed. */
export type Config = Omit<Settings, Composed> & {
  tls: { certFile: string; keyFile: string } | undefined;
  /** A PKCS#11 token holding signing keys (docs/transparency.md, "Key custody"); undefined: none. */
  pkcs11: Pkcs11Config | undefined;
  bootstrap: { company: string; email: string; password: string } | undefined;
  /** OpenID Connect sign-in (docs/console.md, "Single sign-on"); undefined when OIDC_ISSUER is unset. */
  oidc: OidcConfig | undefined;
  /** Cosignatures a checkpoint needs to count as witnessed (integrity status, metrics); all witnesses by default. */
  witnessQuorum: number;
  /** STREAM_DIRECTORY, or `streams` in the data directory. */
  streamDirectory: string;
};

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

export const MIN_PASSWORD_LENGTH = 12;

type Env = Record<string, string | undefined>;

/** Reads every variable of the table by its kind; each problem names its variable. */
function readSettings(env: Env): { settings: Settings; problems: string[] } {
  const problems: string[] = [];
  const settings: Record<string, unknown> = {};
  for (const [key, setting] of Object.entries(SETTINGS)) {
    const { value, problem } = setting.read(env);
    if (problem !== undefined) problems.push(`${setting.name} ${problem}`);
    settings[key] = value;
  }
  return { settings: settings as Settings, problems };
}

/** Reads and validates the environment; throws ConfigError listing every bad value. */
export function loadConfig(env: Env = process.env): Config {
  const { settings: s, problems } = readSettings(env);
  const {
    tlsCertFile,
    tlsKeyFile,
    pkcs11Module,
    pkcs11TokenLabel,
    pkcs11PinFile,
    pkcs11Pin,
    pkcs11KeyLabel,
    bootstrapCompany,
    bootstrapEmail,
    bootstrapPassword,
    oidcIssuer,
    oidcClientId,
    oidcClientSecret,
    oidcClientSecretFile,
    oidcRedirectUri,
    oidcCompany,
    oidcAllowedDomains,
    oidcRoleClaim,
    oidcRoleMap,
    oidcDefaultRole,
    oidcName,
    witnessQuorum: quorum,
    streamDirectory,
    ...plain
  } = s;

  if ((tlsCertFile === undefined) !== (tlsKeyFile === undefined)) problems.push('TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  if (s.ledgerStore !== 'auto' && s.databaseUrl === undefined) problems.push(`LEDGER_STORE=${s.ledgerStore} needs DATABASE_URL (a ${s.ledgerStore === 'citus' ? 'Citus coordinator' : 'PostgreSQL database'})`);

  let bootstrap: Config['bootstrap'];
  if ((bootstrapEmail === undefined) !== (bootstrapPassword === undefined)) {
    problems.push('LEDGER_BOOTSTRAP_EMAIL and LEDGER_BOOTSTRAP_PASSWORD must be set together');
  } else if (bootstrapEmail !== undefined && bootstrapPassword !== undefined) {
    if (!isPlausibleEmail(bootstrapEmail)) problems.push(`LEDGER_BOOTSTRAP_EMAIL is not an email address: "${bootstrapEmail}"`);
    if (bootstrapPassword.length < MIN_PASSWORD_LENGTH) problems.push(`LEDGER_BOOTSTRAP_PASSWORD must be at least ${MIN_PASSWORD_LENGTH} characters`);
    bootstrap = { company: bootstrapCompany, email: bootstrapEmail, password: bootstrapPassword };
  }

  let witnessQuorum = s.witnesses.length;
  if (quorum !== undefined) {
    if (!/^\d+$/.test(quorum) || Number(quorum) > s.witnesses.length) problems.push(`WITNESS_QUORUM must be a whole number from 0 to ${s.witnesses.length} (the number of WITNESSES), got "${quorum}"`);
    else witnessQuorum = Number(quorum);
  }

  let pkcs11: Pkcs11Config | undefined;
  if (pkcs11Module !== undefined) {
    const pin = pkcs11PinFile ? fs.readFileSync(pkcs11PinFile, 'utf8').trim() : pkcs11Pin;
    if (!pkcs11TokenLabel) problems.push('LEDGER_PKCS11_TOKEN_LABEL (the label of the token holding the signing keys) is required with LEDGER_PKCS11_MODULE');
    if (!pin) problems.push("LEDGER_PKCS11_PIN_FILE or LEDGER_PKCS11_PIN (the token's user PIN) is required with LEDGER_PKCS11_MODULE");
    pkcs11 = { module: pkcs11Module, tokenLabel: pkcs11TokenLabel ?? '', pin: pin ?? '', keyLabel: pkcs11KeyLabel };
  } else if ([pkcs11TokenLabel, pkcs11KeyLabel, pkcs11Pin, pkcs11PinFile].some((v) => v !== undefined)) {
    problems.push("the LEDGER_PKCS11_ settings need LEDGER_PKCS11_MODULE (the path of the token's PKCS#11 library)");
  }
  if (pkcs11?.keyLabel !== undefined && s.signingKeyFile !== undefined) problems.push('set LEDGER_PKCS11_KEY_LABEL or LEDGER_SIGNING_KEY_FILE, not both: the service starts with one signing key');

  let oidc: OidcConfig | undefined;
  if (oidcIssuer !== undefined) {
    const roleMap: OidcConfig['roleMap'] = [];
    for (const pair of (oidcRoleMap ?? '').split(',').map((x) => x.trim()).filter(Boolean)) {
      const [value, role] = pair.split('=').map((x) => x.trim());
      if (!value || !role || !isRole(role)) problems.push(`OIDC_ROLE_MAP entries are claim-value=role (admin, reviewer or auditor) separated by commas, got "${pair}"`);
      else roleMap.push({ value, role });
    }
    const allowedDomains = (oidcAllowedDomains ?? '').split(',').map((d) => d.trim().toLowerCase()).filter(Boolean);
    if (!oidcClientId) problems.push('OIDC_CLIENT_ID is required with OIDC_ISSUER');
    if (!oidcRedirectUri || !/^https?:\/\/.+\/api\/v1\/auth\/oidc\/callback$/.test(oidcRedirectUri)) problems.push("OIDC_REDIRECT_URI must be this service's public URL followed by /api/v1/auth/oidc/callback");
    if (!oidcCompany) problems.push('OIDC_COMPANY (the company users of this provider belong to) is required with OIDC_ISSUER');
    if (allowedDomains.length === 0) problems.push('OIDC_ALLOWED_DOMAINS (the email domains allowed in, comma-separated) is required with OIDC_ISSUER');
    const clientSecret = oidcClientSecretFile ? fs.readFileSync(oidcClientSecretFile, 'utf8').trim() : oidcClientSecret;
    oidc = {
      issuer: oidcIssuer,
      clientId: oidcClientId ?? '',
      clientSecret,
      redirectUri: oidcRedirectUri ?? '',
      company: oidcCompany ?? '',
      allowedDomains,
      roleClaim: oidcRoleClaim,
      roleMap,
      defaultRole: oidcDefaultRole !== undefined && isRole(oidcDefaultRole) ? oidcDefaultRole : undefined,
      name: oidcName,
    };
  }
  if (!s.localLogin && oidc === undefined) problems.push('LOCAL_LOGIN=off needs OIDC_ISSUER: nobody could sign in');

  if (problems.length > 0) throw new ConfigError(problems);
  return {
    ...plain,
    tls: tlsCertFile && tlsKeyFile ? { certFile: tlsCertFile, keyFile: tlsKeyFile } : undefined,
    pkcs11,
    bootstrap,
    oidc,
    witnessQuorum,
    streamDirectory: streamDirectory ?? path.join(s.dataDir, 'streams'),
  };
}

const ROLES = ['admin', 'reviewer', 'auditor'] as const;
const isRole = (r: string): r is (typeof ROLES)[number] => (ROLES as readonly string[]).includes(r);

/**
 * The text of .env.example: every variable of the table, commented out with its default
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
    const unset = !v.literal;
    return `${wrap(`${v.description}${unset ? ` Default: ${v.default}.` : ''}`)}\n# ${v.name}=${unset ? '' : v.default}`;
  });
  return `# audit-ledger configuration: every environment variable the service reads, with its default.
# Generated from packages/server/src/kernel/config-table.ts by \`audit-ledger env-example\`; a test keeps it
# in step. Copy to .env and uncomment what you set (compose.yaml reads the variables it names).

${blocks.join('\n\n')}
`;
}

/** The README's configuration table (`audit-ledger config-table` prints it; a test keeps the README's equal to it). */
export function configTable(): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  return ['| Variable | Default | Meaning |', '|---|---|---|', ...CONFIG_VARIABLES.map((v) => `| \`${v.name}\` | ${cell(v.literal ? `\`${v.default}\`` : v.default)} | ${cell(v.description)} |`)].join('\n') + '\n';
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
