// `audit-ledger verify-bundle`: the auditor's offline check. Reads files only; needs no
// configuration, server or database.
import fs from 'node:fs';
import readline from 'node:readline';
import { ExportVerifier, type OfflineReport, parseTrustedKeys, type TrustedKey, verifyBundle } from './offline.js';

export const VERIFY_USAGE = `audit-ledger verify-bundle FILE [--public-key KEYFILE] [--checkpoint CHECKPOINT]

  FILE          an evidence bundle (GET /api/v1/exports/evidence), or with --checkpoint a
                JSON Lines export (GET /api/v1/exports/logs?format=jsonl) complete from seq 0
  --public-key  the service's public key(s) you trust: SPKI PEM, a C2SP verifier key, or the
                JSON of GET /api/v1/integrity/keys. Without it a bundle is checked against the
                keys it carries (consistency only; the report says so)
  --checkpoint  a checkpoint (the JSON of GET /api/v1/integrity/checkpoint, or its signed note)

Exit status: 0 when every check holds, 1 when any fails, 2 when the files cannot be read.
`;

export async function verifyCommand(file: string, opts: { publicKey?: string; checkpoint?: string }): Promise<{ code: number; output: string }> {
  let keys: TrustedKey[] | null = null;
  if (opts.publicKey) keys = parseTrustedKeys(fs.readFileSync(opts.publicKey, 'utf8'));
  let report: OfflineReport;
  if (opts.checkpoint) {
    if (!keys) throw new Error('verifying an export needs --public-key');
    const raw = fs.readFileSync(opts.checkpoint, 'utf8');
    const note = raw.trimStart().startsWith('{') ? String((JSON.parse(raw) as { note?: unknown }).note) : raw;
    const v = new ExportVerifier(keys, note, null);
    const lines = readline.createInterface({ input: fs.createReadStream(file, 'utf8'), crlfDelay: Infinity });
    for await (const line of lines) v.addLine(line);
    report = v.finish();
  } else {
    report = verifyBundle(JSON.parse(fs.readFileSync(file, 'utf8')) as unknown, keys);
  }
  const verdict = report.ok ? 'VERIFIED: every check holds' : 'NOT VERIFIED: see the FAIL lines above';
  return { code: report.ok ? 0 : 1, output: `${report.lines.join('\n')}\n${verdict}\n` };
}
