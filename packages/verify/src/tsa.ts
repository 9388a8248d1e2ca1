// An RFC 3161 token's signature, checked against the Time Stamping Authority the auditor pinned
// (`--tsa-ca FILE`: the TSA's CA certificate(s), PEM): the signature over the signed attributes by
// a certificate the token carries, that certificate for timestamping and valid at genTime, and a
// chain from it to a pinned certificate (through the token's other certificates, four at most).
// The imprint and the signed attributes' digest are the core's (timestampProblems).
import { verify, X509Certificate } from 'node:crypto';
import type { TimeStampToken } from '@audit-ledger/core';

const EKU_TIME_STAMPING = '1.3.6.1.5.5.7.3.8';
const DIGESTS: Record<string, string> = { '2.16.840.1.101.3.4.2.1': 'sha256', '2.16.840.1.101.3.4.2.2': 'sha384', '2.16.840.1.101.3.4.2.3': 'sha512' };
/** Signature algorithms whose hash is the digest algorithm's: rsaEncryption, sha{256,384,512}WithRSAEncryption, ecdsa-with-SHA{256,384,512}. */
const HASHED = new Set(['1.2.840.113549.1.1.1', '1.2.840.113549.1.1.11', '1.2.840.113549.1.1.12', '1.2.840.113549.1.1.13', '1.2.840.10045.4.3.2', '1.2.840.10045.4.3.3', '1.2.840.10045.4.3.4']);
const ED25519 = '1.3.101.112';

/** The certificates of a PEM file (one or several). */
export function pemCertificates(text: string): X509Certificate[] {
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new Error('no PEM certificate found');
  return blocks.map((b) => new X509Certificate(b));
}

function signedBy(cert: X509Certificate, token: TimeStampToken): boolean {
  try {
    if (token.signatureAlgorithm === ED25519) return verify(null, token.signedAttributes, cert.publicKey, token.signature);
    const digest = DIGESTS[token.digestAlgorithm];
    if (!digest || !HASHED.has(token.signatureAlgorithm)) return false;
    return verify(digest, token.signedAttributes, cert.publicKey, token.signature);
  } catch {
    return false;
  }
}

function chainsTo(cert: X509Certificate, pool: X509Certificate[], pinned: X509Certificate[], depth = 0): boolean {
  if (pinned.some((p) => p.fingerprint256 === cert.fingerprint256)) return true;
  if (pinned.some((p) => cert.checkIssued(p) && cert.verify(p.publicKey))) return true;
  if (depth >= 4) return false;
  return pool.some((i) => i.fingerprint256 !== cert.fingerprint256 && i.ca && cert.checkIssued(i) && cert.verify(i.publicKey) && chainsTo(i, pool, pinned, depth + 1));
}

/** Null when the token is signed by a timestamping certificate of the pinned TSA, valid at genTime; else what is wrong. */
export function tsaSignatureProblem(token: TimeStampToken, pinned: X509Certificate[]): string | null {
  const certs = token.certificates.map((d) => new X509Certificate(Buffer.from(d)));
  const signer = certs.find((c) => signedBy(c, token));
  if (!signer) return certs.length === 0 ? 'the token carries no certificate (the TSA was not asked for it)' : 'no certificate in the token verifies its signature';
  if (!(signer.keyUsage ?? []).includes(EKU_TIME_STAMPING)) return `the signing certificate (${signer.subject.replace(/\n/g, ', ')}) is not for timestamping`;
  const at = Date.parse(token.genTime);
  if (at < Date.parse(signer.validFrom) || at > Date.parse(signer.validTo)) return `the signing certificate was not valid at ${token.genTime}`;
  if (!chainsTo(signer, certs, pinned)) return `the signing certificate (${signer.subject.replace(/\n/g, ', ')}) does not chain to the pinned TSA certificate`;
  return null;
}
