// `audit-ledger witness serve`: the witness (witness.ts) over HTTP. POST /add-checkpoint is the
// C2SP tlog-witness call; GET / answers the witness's name and verifier key, for whoever
// configures a log or a client with it.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { witnessVerifierKey } from '@audit-ledger/core';
import { loadOrCreateKeyFile } from '../../ledger/keyring.js';
import { type FollowedLog, Witness } from './witness.js';

export interface WitnessServeOptions {
  name: string;
  /** Ed25519 PKCS#8 PEM; created (0600) when missing. */
  keyFile: string;
  /** JSON file: {"logs": [{"origin" | "origin_prefix", "verifier_keys": [...]}]}. */
  logsFile: string;
  /** The witness's SQLite state file. */
  stateFile: string;
  host: string;
  port: number;
}

const MAX_BODY = 64 * 1024;

export async function serveWitness(opts: WitnessServeOptions, log: (line: Record<string, unknown>) => void): Promise<{ url: string; close: () => Promise<void> }> {
  const key = loadOrCreateKeyFile(opts.keyFile, true);
  const followed = JSON.parse(fs.readFileSync(opts.logsFile, 'utf8')) as { logs: FollowedLog[] };
  if (!Array.isArray(followed.logs) || followed.logs.length === 0) throw new Error(`${opts.logsFile}: expected {"logs": [{"origin" or "origin_prefix", "verifier_keys": [...]}]}`);
  fs.mkdirSync(path.dirname(path.resolve(opts.stateFile)), { recursive: true });
  const privateKey = key.custody.keyObject;
  if (!privateKey) throw new Error(`${opts.keyFile}: not a key file`);
  const witness = new Witness(opts.name, privateKey, key.publicKey, followed.logs, opts.stateFile);
  const vkey = witnessVerifierKey(opts.name, witness.publicKey);
  const server = http.createServer((req, res) => {
    const answer = (status: number, contentType: string, body: string) => res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' }).end(body);
    if (req.method === 'GET' && (req.url === '/' || req.url === '')) return answer(200, 'application/json', JSON.stringify({ name: opts.name, verifier_key: vkey }));
    if (req.url !== '/add-checkpoint' && req.url !== '/add-key-transitions') return answer(404, 'text/plain; charset=utf-8', 'not found\n');
    if (req.method !== 'POST') return answer(405, 'text/plain; charset=utf-8', 'POST only\n');
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        answer(413, 'text/plain; charset=utf-8', 'request too large\n');
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => {
      if (res.headersSent) return;
      let result;
      try {
        const text = Buffer.concat(chunks).toString('utf8');
        result = req.url === '/add-key-transitions' ? witness.addKeyTransitions(text) : witness.addCheckpoint(text);
      } catch (err) {
        log({ level: 50, msg: 'add-checkpoint failed', err: (err as Error).message });
        return answer(500, 'text/plain; charset=utf-8', 'internal error\n');
      }
      log({ level: result.status >= 400 ? 40 : 30, msg: req.url === '/add-key-transitions' ? 'add-key-transitions' : 'add-checkpoint', status: result.status });
      answer(result.status, result.contentType, result.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(opts.port, opts.host, resolve));
  const address = server.address() as { port: number };
  const url = `http://${opts.host}:${address.port}`;
  log({ level: 30, msg: 'witness listening', url, name: opts.name, verifier_key: vkey });
  return {
    url,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      witness.close();
    },
  };
}
