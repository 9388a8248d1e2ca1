// Signed checkpoints: the C2SP tlog-checkpoint body inside a C2SP signed note, signed
// with Ed25519. Pure. https://c2sp.org/tlog-checkpoint and https://c2sp.org/signed-note
import { createHash, type KeyObject, sign, verify } from 'node:crypto';

export interface Checkpoint {
  origin: string;
  treeSize: number;
  /** 32 raw bytes. */
  rootHash: Buffer;
  /** ISO 8601 time the service signed it (our one extension line). */
  timestamp: string;
}

/** The signature algorithm byte C2SP assigns to Ed25519. */
const ED25519_ALG = 0x01;
const SIG_PREFIX = '\u2014 '; // em dash and space start every signature line

/** The note body: origin, tree size, base64 root hash, then "timestamp <ISO time>". */
export function checkpointText(c: Checkpoint): string {
  return `${c.origin}\n${c.treeSize}\n${c.rootHash.toString('base64')}\ntimestamp ${c.timestamp}\n`;
}

/** C2SP key ID: the first 4 bytes of SHA-256(name ‖ "\n" ‖ 0x01 ‖ raw public key). */
export function noteKeyId(name: string, rawPublicKey: Buffer): Buffer {
  return createHash('sha256')
    .update(Buffer.concat([Buffer.from(`${name}\n`, 'utf8'), Buffer.from([ED25519_ALG]), rawPublicKey]))
    .digest()
    .subarray(0, 4);
}

/** The verifier key string Go's note package and other C2SP tools accept: name+keyid+base64(0x01 ‖ key). */
export function verifierKey(name: string, rawPublicKey: Buffer): string {
  return `${name}+${noteKeyId(name, rawPublicKey).toString('hex')}+${Buffer.concat([Buffer.from([ED25519_ALG]), rawPublicKey]).toString('base64')}`;
}

export function signNote(text: string, name: string, privateKey: KeyObject, rawPublicKey: Buffer): string {
  const sig = sign(null, Buffer.from(text, 'utf8'), privateKey);
  return `${text}\n${SIG_PREFIX}${name} ${Buffer.concat([noteKeyId(name, rawPublicKey), sig]).toString('base64')}\n`;
}

export interface NoteSignature {
  name: string;
  keyId: Buffer;
  signature: Buffer;
}

/** Splits a signed note into its text and signature lines; throws on a malformed note. */
export function parseNote(note: string): { text: string; signatures: NoteSignature[] } {
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) throw new Error('malformed note: no blank line before the signatures');
  const text = note.slice(0, split + 1);
  const signatures = note
    .slice(split + 2, -1)
    .split('\n')
    .map((line) => {
      if (!line.startsWith(SIG_PREFIX)) throw new Error(`malformed note signature line: ${JSON.stringify(line)}`);
      const [name, b64, ...rest] = line.slice(SIG_PREFIX.length).split(' ');
      const raw = Buffer.from(b64 ?? '', 'base64');
      if (!name || rest.length > 0 || raw.length !== 68) throw new Error(`malformed note signature line: ${JSON.stringify(line)}`);
      return { name, keyId: raw.subarray(0, 4), signature: raw.subarray(4) };
    });
  return { text, signatures };
}

/** True when the note carries a valid signature by this (name, key). */
export function noteSignedBy(note: string, name: string, publicKey: KeyObject, rawPublicKey: Buffer): boolean {
  let parsed;
  try {
    parsed = parseNote(note);
  } catch {
    return false;
  }
  const id = noteKeyId(name, rawPublicKey);
  return parsed.signatures.some((s) => s.name === name && s.keyId.equals(id) && verify(null, Buffer.from(parsed.text, 'utf8'), publicKey, s.signature));
}

/** Parses a checkpoint body (the note text); throws with what is wrong. */
export function parseCheckpointText(text: string): Checkpoint {
  const lines = text.split('\n');
  if (lines.at(-1) !== '' || lines.length < 4) throw new Error('malformed checkpoint: expected origin, tree size and root hash lines');
  const [origin, size, root, ...ext] = lines.slice(0, -1) as [string, string, string, ...string[]];
  if (!/^(0|[1-9][0-9]*)$/.test(size) || !Number.isSafeInteger(Number(size))) throw new Error(`malformed checkpoint: tree size ${JSON.stringify(size)}`);
  const rootHash = Buffer.from(root, 'base64');
  if (rootHash.length !== 32 || rootHash.toString('base64') !== root) throw new Error('malformed checkpoint: root hash is not 32 bytes of base64');
  const ts = ext.find((l) => l.startsWith('timestamp '));
  return { origin, treeSize: Number(size), rootHash, timestamp: ts ? ts.slice('timestamp '.length) : '' };
}
