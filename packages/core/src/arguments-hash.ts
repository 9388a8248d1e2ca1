// The arguments hash an approval binds (docs/governance.md, "Approvals bound to the exact
// action"): lowercase hex SHA-256 of the RFC 8785 canonical JSON of the arguments, as UTF-8. The
// service computes it when a request is made and when an execution is checked; an SDK computes it
// to check before it acts. One rule for both sides, with vectors (testdata/arguments-hash.json).
import { sha256Hex } from '#crypto';
import { canonicalJson, type Json } from './json.js';

/** lowercase_hex(SHA-256(UTF-8(JCS(arguments)))). */
export function argumentsHash(args: Json): string {
  return sha256Hex(canonicalJson(args));
}
