// RFC 3161 timestamps over checkpoints (docs/ledger-format.md §19): the request the service sends a
// Time Stamping Authority for a checkpoint, and the token it keeps, read back. A token says that
// the TSA saw SHA-256(checkpoint note) at genTime. Pure: what can be checked without the TSA's
// certificate is checked here (the imprint, the signed attributes' digest of the TSTInfo); the
// signature itself, by a certificate chaining to the TSA's pinned CA, is checked where X.509 is
// at hand (@audit-ledger/verify's tsa.ts).
import { bytesEqual, fromHex, sha256, toHex, utf8 } from '#crypto';
import { children, concat, type Der, expectTag, generalizedTime, oid, oidText, parseDer, sequence, tlv, unsignedInteger } from './der.js';
import { CoreError } from './errors.js';

export const OID_SHA256 = '2.16.840.1.101.3.4.2.1';
const OID_SIGNED_DATA = '1.2.840.113549.1.7.2';
const OID_TST_INFO = '1.2.840.113549.1.9.16.1.4';
const OID_MESSAGE_DIGEST = '1.2.840.113549.1.9.4';
const OID_CONTENT_TYPE = '1.2.840.113549.1.9.3';

/** What a token's imprint must be for a checkpoint: SHA-256 of the signed note's bytes, exactly as signed (no cosignature lines). */
export function checkpointImprint(note: string): Uint8Array {
  return sha256(utf8(note));
}

/** A TimeStampReq (RFC 3161 §2.4.1) for a SHA-256 imprint: version 1, the nonce, and certReq so the token carries the TSA's certificate. */
export function timeStampRequest(imprint: Uint8Array, nonce: Uint8Array): Uint8Array {
  if (imprint.length !== 32) throw new CoreError('out_of_range', 'a SHA-256 imprint has 32 bytes');
  const algorithm = sequence(oid(OID_SHA256), tlv(0x05, new Uint8Array(0)));
  return sequence(unsignedInteger(Uint8Array.of(1)), sequence(algorithm, tlv(0x04, imprint)), unsignedInteger(nonce), tlv(0x01, Uint8Array.of(0xff)));
}

/** A TimeStampResp: granted (status 0 or 1) with its token, or refused with the TSA's words. */
export function parseTimeStampResponse(der: Uint8Array): { granted: true; token: Uint8Array } | { granted: false; status: number; text: string } {
  const [statusInfo, token] = children(expectTag(parseDer(der), 0x30, 'TimeStampResp'));
  const parts = children(expectTag(statusInfo, 0x30, 'PKIStatusInfo'));
  const status = integerValue(parts[0] as Der);
  if ((status === 0 || status === 1) && token) return { granted: true, token: token.bytes.slice() };
  const text = parts[1]?.tag === 0x30 ? children(parts[1]).map((s) => new TextDecoder().decode(s.value)).join('; ') : '';
  return { granted: false, status, text };
}

function integerValue(d: Der): number {
  expectTag(d, 0x02, 'INTEGER');
  let n = 0;
  for (const b of d.value) n = n * 256 + b;
  return n;
}

export interface TimeStampToken {
  /** TSTInfo */
  policy: string;
  hashAlgorithm: string;
  /** Lowercase hex of the imprint. */
  imprint: string;
  /** Lowercase hex. */
  serial: string;
  /** RFC 3339 with milliseconds. */
  genTime: string;
  /** Lowercase hex, or null. */
  nonce: string | null;
  /** The CMS SignedData around it. */
  eContent: Uint8Array;
  digestAlgorithm: string;
  /** The signed attributes as signed: DER with the SET tag (RFC 5652 §5.4). */
  signedAttributes: Uint8Array;
  /** The messageDigest attribute, lowercase hex. */
  messageDigest: string;
  signatureAlgorithm: string;
  signature: Uint8Array;
  /** DER of each certificate the token carries. */
  certificates: Uint8Array[];
}

/** Reads a TimeStampToken (a CMS ContentInfo holding SignedData over a TSTInfo); throws CoreError on anything else. */
export function parseTimeStampToken(der: Uint8Array): TimeStampToken {
  const [contentType, content] = children(expectTag(parseDer(der), 0x30, 'ContentInfo'));
  if (oidText(contentType as Der) !== OID_SIGNED_DATA) throw new CoreError('malformed_encoding', 'the token is not CMS SignedData');
  const signedData = children(expectTag(children(expectTag(content, 0xa0, 'content'))[0], 0x30, 'SignedData'));
  const [, digestAlgorithms, encap, ...rest] = signedData;
  expectTag(digestAlgorithms, 0x31, 'digestAlgorithms');
  const [eType, eExplicit] = children(expectTag(encap, 0x30, 'EncapsulatedContentInfo'));
  if (oidText(eType as Der) !== OID_TST_INFO) throw new CoreError('malformed_encoding', 'the token does not hold a TSTInfo');
  const eContent = expectTag(children(expectTag(eExplicit, 0xa0, 'eContent'))[0], 0x04, 'eContent').value;
  const certificates = rest.filter((d) => d.tag === 0xa0).flatMap((d) => children(d).map((c) => c.bytes.slice()));
  const signerInfos = children(expectTag(rest.find((d) => d.tag === 0x31), 0x31, 'signerInfos'));
  if (signerInfos.length !== 1) throw new CoreError('malformed_encoding', `a timestamp token has one signer, not ${signerInfos.length}`);
  const si = children(expectTag(signerInfos[0], 0x30, 'SignerInfo'));
  const digestAlgorithm = oidText(children(expectTag(si[2], 0x30, 'digestAlgorithm'))[0] as Der);
  const attrs = expectTag(si[3], 0xa0, 'signedAttrs');
  const signatureAlgorithm = oidText(children(expectTag(si[4], 0x30, 'signatureAlgorithm'))[0] as Der);
  const signature = expectTag(si[5], 0x04, 'signature').value.slice();
  let messageDigest: string | null = null;
  let contentTypeOk = false;
  for (const a of children(attrs)) {
    const [type, values] = children(expectTag(a, 0x30, 'Attribute'));
    const t = oidText(type as Der);
    const v = children(expectTag(values, 0x31, 'AttributeValues'))[0];
    if (t === OID_MESSAGE_DIGEST) messageDigest = toHex(expectTag(v, 0x04, 'messageDigest').value);
    if (t === OID_CONTENT_TYPE) contentTypeOk = oidText(v as Der) === OID_TST_INFO;
  }
  if (messageDigest === null || !contentTypeOk) throw new CoreError('malformed_encoding', 'the signed attributes lack the content type or the message digest');
  // TSTInfo
  const tst = children(expectTag(parseDer(eContent), 0x30, 'TSTInfo'));
  const [, policy, imprintSeq, serial, genTime, ...more] = tst;
  const [alg, hashed] = children(expectTag(imprintSeq, 0x30, 'MessageImprint'));
  const nonce = more.find((d) => d.tag === 0x02);
  return {
    policy: oidText(policy as Der),
    hashAlgorithm: oidText(children(expectTag(alg, 0x30, 'AlgorithmIdentifier'))[0] as Der),
    imprint: toHex(expectTag(hashed, 0x04, 'hashedMessage').value),
    serial: toHex(expectTag(serial, 0x02, 'serialNumber').value),
    genTime: generalizedTime(genTime as Der),
    nonce: nonce ? toHex(nonce.value) : null,
    eContent: eContent.slice(),
    digestAlgorithm,
    signedAttributes: concat([Uint8Array.of(0x31), attrs.bytes.subarray(1)]),
    messageDigest,
    signatureAlgorithm,
    signature,
    certificates,
  };
}

/**
 * What can be wrong with a token as a timestamp of this checkpoint note, short of its signature:
 * the imprint is not SHA-256 of the note, or the signed attributes do not digest the TSTInfo.
 * Empty when both hold.
 */
export function timestampProblems(token: TimeStampToken, note: string): string[] {
  const problems: string[] = [];
  if (token.hashAlgorithm !== OID_SHA256) problems.push(`the token's imprint is not SHA-256 (${token.hashAlgorithm})`);
  else if (!bytesEqual(fromHex(token.imprint), checkpointImprint(note))) problems.push('the token timestamps something else: its imprint is not SHA-256 of the checkpoint note');
  if (token.digestAlgorithm !== OID_SHA256) problems.push(`the token's signer digests with ${token.digestAlgorithm}, not SHA-256`);
  else if (toHex(sha256(token.eContent)) !== token.messageDigest) problems.push('the token\'s signed attributes do not digest its TSTInfo');
  return problems;
}

