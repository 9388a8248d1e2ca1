// Signed checkpoints: the C2SP tlog-checkpoint body inside a C2SP signed note, signed with
// Ed25519. https://c2sp.org/tlog-checkpoint and https://c2sp.org/signed-note
// The core parses and checks; the server signs (it builds the same text with checkpointText and
// the same key id with noteKeyId).
import { type KeyPeriod, keyNotActive } from './key-periods.js';
import { bytesEqual, fromBase64, sha256, toBase64, toHex, utf8, verifyEd25519 } from '#crypto';
import { CoreError } from './errors.js';
import type { CheckpointRecord } from './record.js';

export interface Checkpoint {
  origin: string;
  treeSize: number;
  /** 32 raw bytes. */
  rootHash: Uint8Array;
  /** ISO 8601 time the service signed it (an extension line). */
  timestamp: string;
  /**
   * The RFC 3161 token an earlier checkpoint of this log got, by its tree size and the SHA-256
   * (lowercase hex) of the token's DER: the extension line `rfc3161 <tree size> <sha256>`
   * (docs/ledger-format.md §19). Absent until the log has a token.
   */
  timestampToken?: { treeSize: number; sha256: string };
}

/** The signature algorithm byte C2SP assigns to Ed25519. */
export const ED25519_ALG = 0x01;
/** An em dash and a space start every signature line. */
export const SIGNATURE_LINE_PREFIX = '\u2014 ';

/** `<LEDGER_ORIGIN>/<company_id>`: a checkpoint can never be passed off as another company's. */
export function companyOrigin(keyName: string, companyId: string): string {
  return `${keyName}/${companyId}`;
}

/** The note body: origin, tree size, base64 root hash, then "timestamp <ISO time>", then (with one) "rfc3161 <tree size> <sha256>". */
export function checkpointText(c: Checkpoint): string {
  const token = c.timestampToken ? `rfc3161 ${c.timestampToken.treeSize} ${c.timestampToken.sha256}\n` : '';
  return `${c.origin}\n${c.treeSize}\n${toBase64(c.rootHash)}\ntimestamp ${c.timestamp}\n${token}`;
}

/** C2SP key ID: the first 4 bytes of SHA-256(name ‖ "\n" ‖ 0x01 ‖ raw public key). */
export function noteKeyId(name: string, rawPublicKey: Uint8Array): Uint8Array {
  return signedNoteKeyId(name, ED25519_ALG, rawPublicKey);
}

/** A C2SP signed-note key id: SHA-256(name ‖ "\n" ‖ signature type ‖ key)[:4]. */
export function signedNoteKeyId(name: string, signatureType: number, rawPublicKey: Uint8Array): Uint8Array {
  const nameBytes = utf8(`${name}\n`);
  const input = new Uint8Array(nameBytes.length + 1 + rawPublicKey.length);
  input.set(nameBytes, 0);
  input[nameBytes.length] = signatureType;
  input.set(rawPublicKey, nameBytes.length + 1);
  return sha256(input).slice(0, 4);
}

/** The verifier key string Go's note package and other C2SP tools accept: name+keyid+base64(0x01 ‖ key). */
export function verifierKey(name: string, rawPublicKey: Uint8Array): string {
  return `${name}+${toHex(noteKeyId(name, rawPublicKey))}+${toBase64(new Uint8Array([ED25519_ALG, ...rawPublicKey]))}`;
}

/** A signature line of a note: its text followed by this line is a signed note. */
export function noteSignatureLine(name: string, rawPublicKey: Uint8Array, signature: Uint8Array): string {
  return `${SIGNATURE_LINE_PREFIX}${name} ${toBase64(new Uint8Array([...noteKeyId(name, rawPublicKey), ...signature]))}\n`;
}

export interface NoteSignature {
  name: string;
  keyId: Uint8Array;
  signature: Uint8Array;
}

/** Splits a signed note into its text and signature lines; throws CoreError malformed_note. */
export function parseNote(note: string): { text: string; signatures: NoteSignature[] } {
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) throw new CoreError('malformed_note', 'malformed note: no blank line before the signatures');
  const text = note.slice(0, split + 1);
  const signatures = note
    .slice(split + 2, -1)
    .split('\n')
    .map((line) => {
      const bad = () => new CoreError('malformed_note', `malformed note signature line: ${JSON.stringify(line)}`);
      if (!line.startsWith(SIGNATURE_LINE_PREFIX)) throw bad();
      const [name, b64, ...rest] = line.slice(SIGNATURE_LINE_PREFIX.length).split(' ');
      let raw: Uint8Array;
      try {
        raw = fromBase64(b64 ?? '');
      } catch {
        throw bad();
      }
      if (!name || rest.length > 0 || raw.length !== 68) throw bad();
      return { name, keyId: raw.slice(0, 4), signature: raw.slice(4) };
    });
  return { text, signatures };
}

/** True when the note carries a valid signature by this (name, raw key). */
export function noteSignedBy(note: string, name: string, rawPublicKey: Uint8Array): boolean {
  let parsed;
  try {
    parsed = parseNote(note);
  } catch {
    return false;
  }
  const id = noteKeyId(name, rawPublicKey);
  const text = utf8(parsed.text);
  return parsed.signatures.some((s) => s.name === name && bytesEqual(s.keyId, id) && verifyEd25519(rawPublicKey, text, s.signature));
}

/** Parses a checkpoint body (the note text); throws CoreError malformed_checkpoint with what is wrong. */
export function parseCheckpointText(text: string): Checkpoint {
  const lines = text.split('\n');
  if (lines.at(-1) !== '' || lines.length < 4) throw new CoreError('malformed_checkpoint', 'malformed checkpoint: expected origin, tree size and root hash lines');
  const [origin, size, root, ...ext] = lines.slice(0, -1) as [string, string, string, ...string[]];
  if (!/^(0|[1-9][0-9]*)$/.test(size) || !Number.isSafeInteger(Number(size))) throw new CoreError('malformed_checkpoint', `malformed checkpoint: tree size ${JSON.stringify(size)}`);
  let rootHash: Uint8Array | undefined;
  try {
    rootHash = fromBase64(root);
  } catch {
    rootHash = undefined;
  }
  if (rootHash?.length !== 32) throw new CoreError('malformed_checkpoint', 'malformed checkpoint: root hash is not 32 bytes of base64');
  const ts = ext.find((l) => l.startsWith('timestamp '));
  const checkpoint: Checkpoint = { origin, treeSize: Number(size), rootHash, timestamp: ts ? ts.slice('timestamp '.length) : '' };
  const anchor = ext.find((l) => l.startsWith('rfc3161 '));
  if (anchor !== undefined) {
    const m = /^rfc3161 (0|[1-9][0-9]*) ([0-9a-f]{64})$/.exec(anchor);
    if (!m || Number(m[1]) > checkpoint.treeSize) throw new CoreError('malformed_checkpoint', `malformed checkpoint: ${JSON.stringify(anchor)} is not "rfc3161 <tree size at most this one's> <sha256 hex>"`);
    checkpoint.timestampToken = { treeSize: Number(m[1]), sha256: m[2] as string };
  }
  return checkpoint;
}

/**
 * What is wrong with a stored checkpoint: its note must be signed by the key it names, for
 * this company's origin, and say what its columns say. Empty when it holds. `publicKey` is the
 * raw key for row.key_id, undefined when no such key is known.
 */
export function checkpointProblems(row: CheckpointRecord, keyName: string, publicKey: Uint8Array | undefined, keyPeriod?: KeyPeriod): string[] {
  if (!publicKey) return [`checkpoint at tree size ${row.tree_size} names unknown key ${row.key_id}`];
  if (!noteSignedBy(row.note, keyName, publicKey)) {
    return [`checkpoint at tree size ${row.tree_size}: the note signature does not verify with key ${row.key_id}`];
  }
  let c: Checkpoint;
  try {
    c = parseCheckpointText(parseNote(row.note).text);
  } catch (err) {
    return [`checkpoint at tree size ${row.tree_size}: ${(err as Error).message}`];
  }
  const problems: string[] = [];
  // A retired key's signature does not count (§12): only one made inside the key's period.
  const inactive = keyNotActive(row.key_id, keyPeriod, c.timestamp, `the checkpoint at tree size ${row.tree_size}, timestamped`);
  if (inactive) problems.push(`key_not_active: ${inactive}`);
  if (c.origin !== companyOrigin(keyName, row.company_id)) problems.push(`checkpoint at tree size ${row.tree_size} is for origin "${c.origin}"`);
  if (c.treeSize !== row.tree_size) problems.push(`checkpoint stored at tree size ${row.tree_size} signs tree size ${c.treeSize}`);
  const signedRoot = toHex(c.rootHash);
  if (signedRoot !== row.root_hash) problems.push(`checkpoint at tree size ${row.tree_size}: stored root ${row.root_hash} differs from the signed root ${signedRoot}`);
  return problems;
}
