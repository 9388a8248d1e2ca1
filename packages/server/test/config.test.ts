// Configuration: defaults, a clear message for every bad value, and the README table in step.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, configTable, loadConfig } from '../src/kernel/config.js';
import { SETTINGS } from '../src/kernel/config-table.js';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ host: '127.0.0.1', port: 8080, databaseUrl: undefined, redisUrl: undefined, logLevel: 'info', tls: undefined, accessTokenTtlSeconds: 3600, maxBodyBytes: 1048576, bootstrap: undefined });
    expect(c.dataDir).toBe(path.resolve('data'));
  });

  it('reads every variable', () => {
    const c = loadConfig({
      HOST: '0.0.0.0', PORT: '9000', LEDGER_DATA_DIR: '/tmp/x', DATABASE_URL: 'postgresql://u@h/db', REDIS_URL: 'redis://h:1',
      LOG_LEVEL: 'debug', TLS_CERT_FILE: 'c.pem', TLS_KEY_FILE: 'k.pem', ACCESS_TOKEN_TTL_SECONDS: '600', MAX_BODY_BYTES: '4096',
      LEDGER_BOOTSTRAP_COMPANY: 'acme', LEDGER_BOOTSTRAP_EMAIL: 'ops@acme.test', LEDGER_BOOTSTRAP_PASSWORD: 'long enough password',
    });
    expect(c).toMatchObject({ host: '0.0.0.0', port: 9000, dataDir: '/tmp/x', databaseUrl: 'postgresql://u@h/db', redisUrl: 'redis://h:1', logLevel: 'debug',
      tls: { certFile: 'c.pem', keyFile: 'k.pem' }, accessTokenTtlSeconds: 600, maxBodyBytes: 4096,
      bootstrap: { company: 'acme', email: 'ops@acme.test', password: 'long enough password' } });
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ TLS_CERT_FILE: 'c.pem' }, 'TLS_KEY_FILE'],
    [{ ACCESS_TOKEN_TTL_SECONDS: '5' }, 'ACCESS_TOKEN_TTL_SECONDS'],
    [{ MAX_BODY_BYTES: '-1' }, 'MAX_BODY_BYTES'],
    [{ LEDGER_BOOTSTRAP_EMAIL: 'a@b.c' }, 'LEDGER_BOOTSTRAP_PASSWORD'],
    [{ LEDGER_BOOTSTRAP_EMAIL: 'not-an-email', LEDGER_BOOTSTRAP_PASSWORD: 'long enough password' }, 'LEDGER_BOOTSTRAP_EMAIL'],
    [{ LEDGER_BOOTSTRAP_EMAIL: 'a@b.c', LEDGER_BOOTSTRAP_PASSWORD: 'short' }, 'LEDGER_BOOTSTRAP_PASSWORD'],
  ])('rejects %o naming %s', (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(name);
  });

  it('reports every bad value at once', () => {
    try {
      loadConfig({ PORT: 'x', LOG_LEVEL: 'y' });
      expect.unreachable();
    } catch (err) {
      expect((err as ConfigError).problems).toHaveLength(2);
    }
  });

  it('single sign-on: everything it needs, or a message naming each missing piece; passwords off only with it', () => {
    try {
      loadConfig({ OIDC_ISSUER: 'https://id.acme.example', OIDC_ROLE_MAP: 'admins=superuser' });
      expect.unreachable();
    } catch (err) {
      const problems = (err as ConfigError).problems.join('\n');
      for (const name of ['OIDC_CLIENT_ID', 'OIDC_REDIRECT_URI', 'OIDC_COMPANY', 'OIDC_ALLOWED_DOMAINS', 'OIDC_ROLE_MAP']) expect(problems).toContain(name);
    }
    expect(() => loadConfig({ LOCAL_LOGIN: 'off' })).toThrow(/LOCAL_LOGIN=off needs OIDC_ISSUER/);
    const c = loadConfig({ OIDC_ISSUER: 'https://id.acme.example', OIDC_CLIENT_ID: 'ledger', OIDC_REDIRECT_URI: 'https://ledger.acme.example/api/v1/auth/oidc/callback', OIDC_COMPANY: 'Acme', OIDC_ALLOWED_DOMAINS: 'Acme.example, acme.co.uk', OIDC_ROLE_MAP: 'ledger-admins=admin, audit=auditor', LOCAL_LOGIN: 'off' });
    expect(c.oidc).toMatchObject({ allowedDomains: ['acme.example', 'acme.co.uk'], roleClaim: 'groups', roleMap: [{ value: 'ledger-admins', role: 'admin' }, { value: 'audit', role: 'auditor' }], defaultRole: undefined });
    expect(c.localLogin).toBe(false);
  });

  it('the README configuration table is the one the table makes (`audit-ledger config-table`)', () => {
    const readme = fs.readFileSync(path.join(import.meta.dirname, '..', '..', '..', 'README.md'), 'utf8');
    expect(readme).toContain(configTable());
    expect(configTable().split('\n').filter((l) => l.startsWith('| `'))).toHaveLength(Object.keys(SETTINGS).length);
  });

  it('reads every variable as the table documents it: its default when unset, the documented default written out reads the same, and a number\'s documented range holds at both ends', () => {
    let ranges = 0;
    for (const setting of Object.values(SETTINGS)) {
      const unset = setting.read({});
      expect(unset.problem, setting.name).toBeUndefined();
      if (setting.literal) expect(setting.read({ [setting.name]: setting.shown }), setting.name).toEqual(unset);
      const range = /(\d+)–(\d+)\.$/.exec(setting.description);
      if (!range) continue;
      ranges++;
      const [min, max] = [Number(range[1]), Number(range[2])];
      for (const ok of [min, max]) expect(setting.read({ [setting.name]: String(ok) }), setting.name).toEqual({ value: ok });
      const outside = [max + 1, ...(min > 0 ? [min - 1] : [])];
      for (const bad of outside) {
        expect(setting.read({ [setting.name]: String(bad) }).problem, `${setting.name}=${bad}`).toContain(`from ${min} to ${max}`);
        expect(() => loadConfig({ [setting.name]: String(bad) }), setting.name).toThrow(setting.name);
      }
    }
    // Every whole-number setting documents its range.
    expect(ranges).toBe(Object.values(SETTINGS).filter((st) => st.read({ [st.name]: 'x' }).problem?.startsWith('must be a whole number')).length);
    expect(ranges).toBeGreaterThan(10);
  });
});
