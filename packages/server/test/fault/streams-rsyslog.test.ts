// A log stream to a real rsyslog (Debian's rsyslogd with its GnuTLS driver, started here on a free
// port with a certificate from a CA made here): the service sends RFC 5424 messages over TLS with
// octet-counted framing; rsyslog is stopped for a while (an outage) and the service is killed with
// SIGKILL mid-stream; afterwards every entry of the ledger is in what rsyslog wrote to disk at least
// once, every batch id names one seq range, and audit-ledger-verify --stream verifies the file
// offline against the service's key.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { streamMessageOf } from '@audit-ledger/core';
import { verifyCommand } from '@audit-ledger/verify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { STORE_KINDS } from '../helpers/env.js';
import { createTestDatabase, type TestDatabase } from '../helpers/stores.js';
import { freePort } from '../helpers/process.js';
import { BOOTSTRAP, bootstrapKey, call, killLeftovers, type Service, startService } from './harness.js';

const waitFor = <T>(fn: () => T | Promise<T>, timeout = 60_000) => vi.waitFor(fn, { timeout, interval: 100 });


/** A CA and a server certificate for 127.0.0.1, made with the openssl command. */
function certificates(dir: string): { ca: string; cert: string; key: string } {
  const f = (n: string) => path.join(dir, n);
  const run = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('ca.key'), '-out', f('ca.pem'), '-days', '2', '-subj', '/CN=audit-ledger test CA');
  run('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('server.key'), '-out', f('server.csr'), '-subj', '/CN=127.0.0.1');
  fs.writeFileSync(f('san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  run('x509', '-req', '-in', f('server.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f('server.pem'), '-days', '2', '-extfile', f('san.ext'));
  return { ca: f('ca.pem'), cert: f('server.pem'), key: f('server.key') };
}

class Rsyslog {
  private child: ChildProcess | null = null;
  readonly file: string;
  constructor(
    private readonly dir: string,
    readonly port: number,
    certs: { ca: string; cert: string; key: string },
  ) {
    this.file = path.join(dir, 'received.log');
    fs.mkdirSync(path.join(dir, 'work'), { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'rsyslog.conf'),
      [
        `global(workDirectory="${dir}/work" maxMessageSize="1m" defaultNetstreamDriver="gtls" defaultNetstreamDriverCAFile="${certs.ca}" defaultNetstreamDriverCertFile="${certs.cert}" defaultNetstreamDriverKeyFile="${certs.key}")`,
        `module(load="imtcp" streamDriver.name="gtls" streamDriver.mode="1" streamDriver.authMode="anon")`,
        `input(type="imtcp" port="${port}" address="127.0.0.1")`,
        `template(name="raw" type="string" string="%rawmsg%\\n")`,
        `action(type="omfile" file="${this.file}" template="raw")`,
      ].join('\n') + '\n',
    );
  }

  async start(): Promise<void> {
    const child = spawn('rsyslogd', ['-n', '-f', path.join(this.dir, 'rsyslog.conf'), '-i', path.join(this.dir, 'rsyslogd.pid')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout?.on('data', (d) => (out += d));
    child.stderr?.on('data', (d) => (out += d));
    this.child = child;
    // Listening when a TCP connection is taken.
    await waitFor(
      () =>
        new Promise<void>((resolve, reject) => {
          if (child.exitCode !== null) return reject(new Error(`rsyslogd exited ${child.exitCode}: ${out}`));
          const s = net.connect(this.port, '127.0.0.1');
          s.once('connect', () => (s.destroy(), resolve()));
          s.once('error', reject);
        }),
      20_000,
    );
  }

  /** SIGTERM: rsyslog writes what it took and exits. */
  async stop(): Promise<void> {
    const c = this.child;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await exited;
    this.child = null;
  }
}

describe.each(STORE_KINDS)('a log stream to a real rsyslog over TLS (%s)', (kind) => {
  let db: TestDatabase;
  let rsyslog: Rsyslog;
  let dir: string;
  beforeAll(async () => {
    db = await createTestDatabase(kind);
    dir = fs.mkdtempSync(path.join(db.dataDir, 'rsyslog-'));
    rsyslog = new Rsyslog(dir, await freePort(), certificates(dir));
    await rsyslog.start();
  }, 60_000);
  afterAll(async () => {
    await rsyslog?.stop();
    killLeftovers();
    await db.drop();
  });

  it('delivers every entry at least once through a receiver outage and a kill -9, and the copy rsyslog wrote verifies offline', async () => {
    const env = { LEDGER_DATA_DIR: db.dataDir, ...(db.databaseUrl ? { DATABASE_URL: db.databaseUrl } : {}), ...BOOTSTRAP, CHECKPOINT_INTERVAL_MS: '100', STREAM_ALLOW_PRIVATE: 'true', STREAM_TIMEOUT_MS: '3000' };
    let svc: Service = await startService(env);
    const key = await bootstrapKey(svc.url);
    const login = await call(`${svc.url}/api/v1/auth/login`, 'POST', { email: BOOTSTRAP.LEDGER_BOOTSTRAP_EMAIL, password: BOOTSTRAP.LEDGER_BOOTSTRAP_PASSWORD });
    const admin = { authorization: `Bearer ${login.json().access_token}` };
    const format = kind === 'sqlite' ? 'cef' : 'ledger';
    const created = await call(`${svc.url}/api/v1/streams`, 'POST', { name: 'rsyslog', destination: { type: 'syslog', host: '127.0.0.1', port: rsyslog.port, ca: fs.readFileSync(path.join(dir, 'ca.pem'), 'utf8') }, format, start: 'beginning' }, admin);
    expect(created.status, created.body).toBe(201);
    const id = created.json().id as string;
    const stream = async () => (await call(`${svc.url}/api/v1/streams/${id}`, 'GET', undefined, admin)).json();
    let sent = 0;
    const append = async (batches: number) => {
      for (let b = 0; b < batches; b++) {
        const logs = Array.from({ length: 25 }, () => ({ event_type: sent % 7 === 6 ? 'tool.failed' : 'tool.called', agent_id: `agent-${sent % 3}`, data: { n: sent++ } }));
        const res = await call(`${svc.url}/api/v1/logs/batch`, 'POST', { logs }, { 'x-api-key': key });
        expect(res.status, res.body).toBe(200);
      }
    };
    const caughtUp = () =>
      waitFor(async () => {
        const st = await stream();
        expect(st.lag.entries, `${JSON.stringify({ ...st, destination: undefined })}\n${svc.logs.lines.filter((l) => Number(l.level) >= 40).map((l) => JSON.stringify(l)).slice(-5).join('\n')}`).toBe(0);
      });

    await append(8);
    await caughtUp();

    // The receiver is down: attempts fail and are retried; nothing is skipped.
    await rsyslog.stop();
    await append(4);
    await waitFor(async () => expect((await stream()).attempts).toBeGreaterThanOrEqual(1));
    expect((await stream()).last_error).toMatch(/ECONNREFUSED|closed|timed out/);
    await rsyslog.start();
    await caughtUp();

    // Killed with SIGKILL while it streams; a new process continues from the cursor.
    await append(12);
    await svc.kill9();
    svc = await startService(env);
    await caughtUp();
    const final = await stream();
    expect(final).toMatchObject({ status: 'active', attempts: 0 });
    await svc.stop();
    await rsyslog.stop();

    // What rsyslog wrote: every seq at least once, each batch id one range, and the file verifies offline.
    const lines = fs.readFileSync(rsyslog.file, 'utf8').split('\n').filter(Boolean);
    const seqs = new Set<number>();
    const ranges = new Map<string, string>();
    for (const line of lines) {
      const m = streamMessageOf(line);
      expect(m, line.slice(0, 200)).not.toBeNull();
      if (m!.kind === 'entry') seqs.add(Number(m!.entry.seq));
      else {
        const range = `${m!.from_seq}-${m!.to_seq}`;
        expect(ranges.get(m!.batch_id) ?? range).toBe(range);
        ranges.set(m!.batch_id, range);
      }
    }
    expect(final.cursor_seq).toBeGreaterThanOrEqual(24 * 25);
    for (let s = 0; s < final.cursor_seq; s++) expect(seqs.has(s), `seq ${s} is not in rsyslog's file`).toBe(true);
    expect(new Set(ranges.values()).size).toBe(ranges.size);
    const keyFile = path.join(dir, 'keys.json');
    const restarted = await startService(env);
    fs.writeFileSync(keyFile, (await call(`${restarted.url}/api/v1/integrity/keys`, 'GET', undefined, { 'x-api-key': key })).body);
    await restarted.stop();
    const verified = await verifyCommand(rsyslog.file, { stream: true, publicKey: keyFile });
    expect(verified.output).toMatch(/VERIFIED: every check holds/);
    expect(verified.code).toBe(0);
    // A line changed in the file is found.
    const i = lines.findIndex((l) => (format === 'cef' ? /suser=agent-\d/.test(l) : /"agent_id":"agent-\d"/.test(l)));
    const target = lines[i]!;
    const tampered =
      format === 'cef'
        ? target.replace(/auditLedger=([A-Za-z0-9_-]+)/, (_m, b: string) => `auditLedger=${Buffer.from(Buffer.from(b, 'base64url').toString('utf8').replace(/"agent-\d"/, '"agent-9"')).toString('base64url')}`)
        : target.replace(/"agent-\d"/, '"agent-9"');
    expect(tampered).not.toBe(target);
    fs.writeFileSync(path.join(dir, 'tampered.log'), [...lines.slice(0, i), tampered, ...lines.slice(i + 1)].join('\n') + '\n');
    expect((await verifyCommand(path.join(dir, 'tampered.log'), { stream: true, publicKey: keyFile })).code).toBe(1);
  }, 240_000);
});
