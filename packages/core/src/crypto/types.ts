// The one seam between the ledger format and a crypto library. Everything the core needs from
// outside pure arithmetic goes through these functions: SHA-256, Ed25519 verification, and the
// byte encodings. The core imports them from '#crypto', which package.json's `imports` map
// resolves by export condition: node.ts (node:crypto and Buffer, fast) under Node, browser.ts
// (@noble/hashes and @noble/curves, pure JS) in browsers and anywhere else. Both must give the
// same answer on every input, malformed ones included: testdata/ holds the vectors both run.
// Signing is not here: only the server signs, with node:crypto.

/** What both implementations export. */
export interface CryptoSeam {
  /** SHA-256 of bytes, or of a string's UTF-8 encoding. */
  sha256(data: Uint8Array | string): Uint8Array;
  /** sha256 as lowercase hex. */
  sha256Hex(data: Uint8Array | string): string;
  /**
   * RFC 8032 Ed25519 verification as docs/ledger-format.md §4 fixes it: S below L, A canonical, A
   * and R not of small order (ed25519-strict.ts), then the cofactorless equation. False for a key
   * that is not 32 bytes or a signature that is not 64, never an exception.
   */
  verifyEd25519(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean;
  /** The library that checks the equation: libsodium or OpenSSL on Node, @noble/curves elsewhere. */
  ed25519Backend(): string;
  /** Lowercase hex. */
  toHex(bytes: Uint8Array): string;
  /** Strict: an even number of hex digits (either case); anything else throws CoreError malformed_encoding. */
  fromHex(hex: string): Uint8Array;
  /** RFC 4648 §4 base64 with padding. */
  toBase64(bytes: Uint8Array): string;
  /** Strict: exactly the canonical text toBase64 would give (standard alphabet, padding); anything else throws. */
  fromBase64(text: string): Uint8Array;
  utf8(text: string): Uint8Array;
  /** The bytes of `parts`, then the UTF-8 of `text`, in one new array. */
  bytesThenUtf8(parts: Uint8Array[], text: string): Uint8Array;
  bytesEqual(a: Uint8Array, b: Uint8Array): boolean;
  /** Which implementation this is, for tests and diagnostics. */
  CRYPTO_IMPLEMENTATION: string;
}
