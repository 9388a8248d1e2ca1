// The encodings an Ed25519 signature must have before its equation is checked (docs/ledger-format.md
// §4, "Which signatures verify"): S below the group order L, the public key A and the commitment R
// not of small order, and A canonical (y below 2^255 - 19). Every verifier of this format applies
// these checks first and then the cofactorless equation, so OpenSSL, libsodium and @noble/curves
// accept exactly the same signatures: of the twelve edge-case vectors of "Taming the many EdDSAs"
// (testdata/ed25519-edge-cases.json) only vector 3. Bytes only: no arithmetic on the curve.

/** The group order L = 2^252 + 27742317777372353535851937790883648493, little-endian. */
const L = [
  0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x10,
];

const hex = (h: string) => Uint8Array.from(h.match(/../g) as string[], (b) => parseInt(b, 16));

/**
 * Every encoding (its sign bit aside) of a point of small order, canonical or not: 0, 1, the two of
 * order 8, p - 1, p and p + 1, as y-coordinates. The list libsodium's ge25519_has_small_order keeps.
 */
const SMALL_ORDER = [
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0100000000000000000000000000000000000000000000000000000000000000',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  'edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  'eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
].map(hex);

/** Whether a 32-byte point encoding is of small order (compared without its sign bit). */
export function hasSmallOrder(p: Uint8Array): boolean {
  return SMALL_ORDER.some((s) => {
    for (let i = 0; i < 31; i++) if (p[i] !== s[i]) return false;
    return ((p[31] as number) & 0x7f) === s[31];
  });
}

/** Whether a 32-byte point encoding is canonical: its y below p = 2^255 - 19. */
export function isCanonicalPoint(p: Uint8Array): boolean {
  if (((p[31] as number) & 0x7f) !== 0x7f) return true;
  for (let i = 30; i > 0; i--) if (p[i] !== 0xff) return true;
  return (p[0] as number) < 0xed;
}

/** Whether a 32-byte little-endian scalar is below L. */
export function isCanonicalScalar(s: Uint8Array): boolean {
  for (let i = 31; i >= 0; i--) {
    if ((s[i] as number) < (L[i] as number)) return true;
    if ((s[i] as number) > (L[i] as number)) return false;
  }
  return false; // equal to L
}

/** The checks before the equation: lengths, S < L, A canonical and not of small order, R not of small order. */
export function strictEncodings(publicKey: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  const r = signature.subarray(0, 32);
  const s = signature.subarray(32, 64);
  return isCanonicalScalar(s) && isCanonicalPoint(publicKey) && !hasSmallOrder(publicKey) && !hasSmallOrder(r);
}
