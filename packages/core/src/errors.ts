// The core's one error type. A caller branches on `code`, never on the message; the message says
// what was wrong for a person reading a log. Verification results are values, not exceptions
// (verify.ts, scan.ts, bundle.ts): CoreError is thrown only for input the core cannot read at all.
export type CoreErrorCode =
  /** Hex or base64 text that is not in the format's strict encoding: fix the input. */
  | 'malformed_encoding'
  /** A signed note without the blank line and signature lines C2SP signed-note requires. */
  | 'malformed_note'
  /** A checkpoint body that is not origin, tree size and root hash lines (C2SP tlog-checkpoint). */
  | 'malformed_checkpoint'
  /** A public key that is not an Ed25519 key in one of the accepted forms (keys.ts). */
  | 'malformed_key'
  /** A value with no RFC 8785 canonical JSON form (undefined, a function, a non-finite number). */
  | 'not_canonicalizable'
  /** A stored Merkle hash that a root or proof needs is absent: the stored tree is damaged. */
  | 'missing_tree_hash'
  /** A Merkle range or index outside the tree (a caller bug, or hostile input). */
  | 'out_of_range';

export class CoreError extends Error {
  override readonly name = 'CoreError';
  constructor(
    readonly code: CoreErrorCode,
    message: string,
    /** For missing_tree_hash: the stored-hash index that is absent. */
    readonly index?: number,
  ) {
    super(message);
  }
}
