// Who acts, as the service's own entries name them, and who decides a governance step: shapes
// every service floor uses (the recorder in ingestion, auth, governance, the trail's readers),
// so they live below all of them.

/** Who did it, as the entry names them. */
export type TrailActor =
  | { kind: 'user'; user_id: string; email: string }
  | { kind: 'api_key'; key_id: string; key_prefix: string }
  /** The service itself (retention runs, a login lockout). */
  | { kind: 'service'; task: string }
  /** The operator of the whole service (LEDGER_OPERATOR_TOKEN): signing key rotation. */
  | { kind: 'operator' };

/** A reviewer deciding: who the session says they are, and their role (admins decide for any team). */
export interface Decider {
  user_id: string;
  email: string;
  role: string;
}
