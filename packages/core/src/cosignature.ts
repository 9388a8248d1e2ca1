// Witness cosignatures: C2SP tlog-cosignature, Ed25519 cosignature/v1. A witness that verified a
// checkpoint's consistency with every checkpoint it saw before signs it with a timestamp; a
// client that requires a quorum of named witnesses is protected from a split view (a log showing
// two auditors two histories). Pure; specified in docs/ledger-format.md §15.
import { bytesEqual, fromBase64, toBase64, toHex, utf8, verifyEd25519 } from '#crypto';
import type { Check } from './checks.js';
import { parseNote, SIGNATURE_LINE_PREFIX, signedNoteKeyId } from './checkpoint.js';
import { CoreError } from './errors.js';

/** The signature type byte of an Ed25519 cosignature/v1 key (c2sp.org/signed-note). */
export const COSIGNATURE_V1_ALG = 0x04;

/** SHA-256(name ‖ "\n" ‖ 0x04 ‖ key)[:4]. */
export function cosignatureKeyId(name: string, rawPublicKey: Uint8Array): Uint8Array {
  return signedNoteKeyId(name, COSIGNATURE_V1_ALG, rawPublicKey);
}

/** The witness's verifier key: name+keyid+base64(0x04 ‖ key). */
export function witnessVerifierKey(name: string, rawPublicKey: Uint8Array): string {
  return `${name}+${toHex(cosignatureKeyId(name, rawPublicKey))}+${toBase64(new Uint8Array([COSIGNATURE_V1_ALG, ...rawPublicKey]))}`;
}

export interface WitnessKey {
  name: string;
  raw: Uint8Array;
}

/** A verifier key's three parts: the name (no '+'), the 8 hex digits of the key id, and the base64 key (which may hold '+'). */
export function splitVerifierKey(vkey: string): { name: string; hash: string; b64: string } | null {
  const m = /^([^+\s]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/=]+)$/.exec(vkey);
  return m ? { name: m[1] as string, hash: m[2] as string, b64: m[3] as string } : null;
}

/** Parses a witness verifier key (type 0x04); throws CoreError malformed_key. */
export function parseWitnessKey(vkey: string): WitnessKey {
  const bad = (why: string) => new CoreError('malformed_key', `not a cosignature/v1 verifier key (${why}): ${vkey}`);
  const parts = splitVerifierKey(vkey.trim());
  if (!parts) throw bad('name+keyid+key');
  const { name, hash, b64 } = parts;
  let bytes: Uint8Array;
  try {
    bytes = fromBase64(b64);
  } catch {
    throw bad('key is not base64');
  }
  if (bytes.length !== 33 || bytes[0] !== COSIGNATURE_V1_ALG) throw bad('type must be 0x04 with a 32-byte Ed25519 key');
  const raw = bytes.slice(1);
  if (toHex(cosignatureKeyId(name, raw)) !== hash) throw bad('key id does not match');
  return { name, raw };
}

/** The message a cosignature signs: the header, the time, then the whole checkpoint note text. */
export function cosignedMessage(noteText: string, timestamp: number): string {
  return `cosignature/v1\ntime ${timestamp}\n${noteText}`;
}

/** A cosignature's parts: key id, POSIX timestamp and Ed25519 signature. */
export interface Cosignature {
  name: string;
  keyId: Uint8Array;
  timestamp: number;
  signature: Uint8Array;
}

/** Parses one signature line as a cosignature (4-byte key id, 8-byte big-endian time, 64-byte signature); null when it is not one. */
export function parseCosignatureLine(line: string): Cosignature | null {
  const text = line.endsWith('\n') ? line.slice(0, -1) : line;
  if (!text.startsWith(SIGNATURE_LINE_PREFIX)) return null;
  const [name, b64, ...rest] = text.slice(SIGNATURE_LINE_PREFIX.length).split(' ');
  if (!name || !b64 || rest.length > 0) return null;
  let raw: Uint8Array;
  try {
    raw = fromBase64(b64);
  } catch {
    return null;
  }
  if (raw.length !== 4 + 8 + 64) return null;
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const timestamp = Number(view.getBigUint64(4));
  return { name, keyId: raw.slice(0, 4), timestamp, signature: raw.slice(12) };
}

/** The signature line for a cosignature made with `sign` (the caller holds the key). */
export function cosignatureLine(name: string, rawPublicKey: Uint8Array, timestamp: number, signature: Uint8Array): string {
  const out = new Uint8Array(4 + 8 + signature.length);
  out.set(cosignatureKeyId(name, rawPublicKey), 0);
  new DataView(out.buffer).setBigUint64(4, BigInt(timestamp));
  out.set(signature, 12);
  return `${SIGNATURE_LINE_PREFIX}${name} ${toBase64(out)}\n`;
}

/** Whether `line` is a valid cosignature by `witness` over the checkpoint note text. */
export function verifyCosignature(noteText: string, line: string, witness: WitnessKey): { ok: boolean; timestamp?: number } {
  const c = parseCosignatureLine(line);
  if (!c || c.name !== witness.name || !bytesEqual(c.keyId, cosignatureKeyId(witness.name, witness.raw))) return { ok: false };
  const ok = verifyEd25519(witness.raw, utf8(cosignedMessage(noteText, c.timestamp)), c.signature);
  return ok ? { ok, timestamp: c.timestamp } : { ok: false };
}

/** The witnesses among `witnesses` that validly cosigned the note text with one of `lines`. */
export function cosignedBy(noteText: string, lines: string[], witnesses: WitnessKey[]): WitnessKey[] {
  return witnesses.filter((w) => lines.some((l) => verifyCosignature(noteText, l, w).ok));
}

/**
 * Whether at least `quorum` of the named witnesses cosigned the checkpoint note: its own signature
 * lines (a cosigned note) and `extraLines` (a checkpoint JSON's `cosignatures`) are searched.
 */
export function witnessQuorumCheck(note: string, extraLines: string[], witnesses: WitnessKey[], quorum: number): Check {
  let lines: string[] = [...extraLines];
  let text: string;
  try {
    text = parseNote(note).text;
    lines = [...note.slice(text.length + 1).split('\n').filter((l) => l !== '').map((l) => `${l}\n`), ...lines];
  } catch (err) {
    return { status: 'fail', code: 'witnesses', message: `checkpoint is malformed: ${(err as Error).message}` };
  }
  const by = cosignedBy(text, lines, witnesses).map((w) => w.name);
  const names = witnesses.map((w) => w.name).join(', ');
  if (by.length >= quorum) return { status: 'ok', code: 'witnesses', message: `checkpoint cosigned by ${by.length} of the ${witnesses.length} named witnesses (${by.join(', ')}); the quorum is ${quorum}` };
  return { status: 'fail', code: 'witnesses', message: `checkpoint cosigned by ${by.length} of the named witnesses (${names}), fewer than the quorum of ${quorum}${by.length ? `: only ${by.join(', ')}` : ''}` };
}
