// Schemas shared by several routes (one definition each, so the OpenAPI document names one shape).
import Type from 'typebox';
import { VIOLATION_KINDS, type ViolationKind } from '@audit-ledger/core';

export const Uuid = Type.String({ format: 'uuid', description: 'UUID' });

/**
 * An id the service made (log_id, hold_id, job_id…): a UUID in lowercase, as the service writes
 * every one. An upper-case spelling is refused with 400 rather than found by no lookup (404).
 */
export const ServiceId = Type.String({ format: 'uuid', pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$', description: 'UUID in lowercase, as the service writes it' });

/**
 * A time a request compares against stored times (search and export ranges, hold scopes, report
 * periods): RFC 3339 with an offset. Compared as an instant, never as text. A leap second
 * (`…:60`) is refused: it names no instant on the POSIX time line the service stores
 * (`Date.parse` would give NaN, and a comparison with NaN is always false).
 */
export const Instant = (description: string) => Type.String({ format: 'date-time', pattern: '^.{17}[0-5]', description: `${description}; RFC 3339 with an offset, compared as an instant` });

/** A string or null: the envelope fields of an entry. */
export const NullableString = Type.Union([Type.String(), Type.Null()]);

/** Any JSON object. */
/** Names a schema for the OpenAPI document's components (http/openapi.ts shareNamedSchemas): referred to, not inlined, wherever it appears. */
export const component = (name: string) => ({ 'x-component': name });

export const JsonObjectSchema = Type.Object({}, { additionalProperties: true });

/** A witness's cosignature of a checkpoint (C2SP tlog-cosignature), as kept. */
export const CosignatureSchema = Type.Object({
  witness: Type.String({ description: "The witness's name" }),
  timestamp: Type.Integer({ description: 'POSIX seconds the witness cosigned at' }),
  line: Type.String({ description: 'The cosignature: a C2SP note signature line (tlog-cosignature, cosignature/v1)' }),
});

export const CheckpointSchema = Type.Object(
  {
    origin: Type.String({ description: '`<LEDGER_ORIGIN>/<company_id>`' }),
    tree_size: Type.Integer({ description: 'Number of entries the tree covers (seq 0 … tree_size − 1)' }),
    root_hash: Type.String({ description: 'RFC 6962 root, lowercase hex (base64 inside the note)' }),
    timestamp: Type.String({ format: 'date-time' }),
    key_id: Type.String({ description: 'The signing key, as listed by /integrity/keys' }),
    note: Type.String({ description: 'The C2SP signed note, exactly as signed' }),
    cosignatures: Type.Optional(
      Type.Array(CosignatureSchema, { description: 'Cosignatures of independent witnesses (WITNESSES), each checked against the witness key when received' }),
    ),
    cosigned_note: Type.Optional(Type.String({ description: 'The note with the witness cosignature lines appended: one C2SP signed note with every signature' })),
  },
  { description: 'A signed checkpoint (C2SP tlog-checkpoint)' },
);

/** A checkpoint as the API shows it (service results are typed from the schemas: one source). */
export type CheckpointView = Type.Static<typeof CheckpointSchema>;
export type CosignatureView = Type.Static<typeof CosignatureSchema>;

/** A problem of an entry's check: a violation kind (the core's vocabulary) and its words. */
export const ViolationSchema = Type.Object({ kind: Type.String(), detail: Type.String() });

/** GET /logs/{id}/verify: one entry's check (ledger/entry-check.ts EntryChecker). */
export const EntryCheckSchema = Type.Object({
  log_id: Uuid,
  hash: Type.String(),
  chain_valid: Type.Boolean(),
  signature_valid: Type.Boolean(),
  erased: Type.Boolean({ description: "True when the entry's content was erased and its erasure record accounts for it: the entry still verifies (chain_valid)" }),
  verified_at: Type.String({ format: 'date-time' }),
  seq: Type.Integer(),
  key_id: Type.String(),
  problems: Type.Array(ViolationSchema, { description: 'What failed; empty when the entry is valid' }),
  merkle_included: Type.Boolean({
    description: "True when the entry's recomputed hash is proven, by an inclusion proof, to be in the tree of the latest checkpoint, and that checkpoint's signature holds",
  }),
  checkpoint: Type.Union([CheckpointSchema, Type.Null()], { description: 'The checkpoint merkle_included was checked against (null before the first)' }),
  agent_signature: Type.Object(
    {
      state: Type.Union([Type.Literal('none'), Type.Literal('valid'), Type.Literal('erased'), Type.Literal('invalid')], {
        description: 'none: the agent did not sign it; valid: its registered key signed the event, inside the key\'s period; erased: signed, but the content is gone so it cannot be checked again; invalid: see detail',
      }),
      key_id: Type.Union([Type.String(), Type.Null()], { description: "The agent key's id (agent_key_id)" }),
      agent_id: Type.Union([Type.String(), Type.Null()], { description: 'The agent whose key it is, when valid' }),
      detail: Type.Union([Type.String(), Type.Null()]),
    },
    { description: "Whether the agent itself signed the event (format version 4, docs/ledger-format.md §20), against the company's agent key register now" },
  ),
  erasure: Type.Union(
    [
      Type.Object({
        log_id: Uuid,
        seq: Type.Integer(),
        erased_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
        legal_basis: Type.Union([Type.String(), Type.Null()]),
        actor: Type.Unknown({ description: 'Who erased it (the erasure record names them)' }),
      }),
      Type.Null(),
    ],
    { description: 'For an erased entry, the compliance.erasure entry that accounts for it; null otherwise' },
  ),
});
export type EntryCheck = Type.Static<typeof EntryCheckSchema>;

/** GET /logs/{id}/proof: an entry's inclusion proof in a signed tree (entries/service.ts). */
export const InclusionProofSchema = Type.Object({
  log_id: Uuid,
  seq: Type.Integer(),
  entry_hash: Type.String(),
  leaf_hash: Type.String({ description: 'SHA-256(0x00 ‖ entry hash bytes), hex' }),
  leaf_index: Type.Integer({ description: 'Equal to seq' }),
  tree_size: Type.Integer(),
  root_hash: Type.String(),
  proof: Type.Array(Type.String(), { description: 'Hex hashes, leaf to root' }),
  checkpoint: Type.Union([CheckpointSchema, Type.Null()], { description: 'The checkpoint signed at tree_size (null if none was signed at exactly that size)' }),
});
export type InclusionProofView = Type.Static<typeof InclusionProofSchema>;

/** One violation a full verification found (the core's ViolationKind). */
export const ScanViolationSchema = Type.Object({
  seq: Type.Union([Type.Integer(), Type.Null()], { description: 'The entry (or, for a checkpoint, tree size − 1) it concerns' }),
  log_id: Type.Union([Uuid, Type.Null()]),
  kind: Type.Unsafe<ViolationKind>(Type.Union(VIOLATION_KINDS.map((k) => Type.Literal(k)))),
  detail: Type.String(),
});

/** A full verification's report (integrity/verifier.ts), GET /integrity/report and a finished job's. */
export const FullVerificationReportSchema = Type.Object(
  {
    job_id: Uuid,
    company_id: Type.String(),
    status: Type.Union([Type.Literal('completed'), Type.Literal('failed')]),
    chain_status: Type.Optional(Type.Union([Type.Literal('valid'), Type.Literal('broken')])),
    options: Type.Object({ entry_signatures: Type.Boolean() }),
    requested_at: Type.String({ format: 'date-time' }),
    started_at: Type.String({ format: 'date-time' }),
    finished_at: Type.String({ format: 'date-time' }),
    duration_ms: Type.Optional(Type.Integer()),
    tree_size: Type.Optional(Type.Integer({ description: 'Entries verified: the latest checkpoint when the job started' })),
    range: Type.Optional(Type.Union([Type.Object({ from_seq: Type.Integer(), to_seq: Type.Integer() }), Type.Null()])),
    entries_checked: Type.Optional(Type.Integer()),
    entries_erased: Type.Optional(Type.Integer({ description: 'Version 2 entries whose content was erased, each accounted for by its erasure record (not violations)' })),
    tree_hashes_checked: Type.Optional(Type.Integer({ description: 'Stored Merkle tree hashes (levels 4, 8, 12, …) compared with the tree rebuilt from the entries' })),
    checkpoints_checked: Type.Optional(Type.Integer()),
    signatures_checked: Type.Optional(Type.Integer({ description: 'Entry signatures checked (only with entry_signatures)' })),
    violation_count: Type.Optional(Type.Integer()),
    violations_truncated: Type.Optional(Type.Boolean({ description: 'True when more violations were found than the 10,000 listed' })),
    violations: Type.Optional(Type.Array(ScanViolationSchema)),
    error: Type.Optional(Type.String({ description: 'Why a failed job failed' })),
  },
  { description: 'The result of a full verification' },
);
export type FullVerificationReport = Type.Static<typeof FullVerificationReportSchema>;
/** A completed job's report: every count present (only a failed job's lacks them). */
export type CompletedVerificationReport = Required<Omit<FullVerificationReport, 'error'>>;

/** Who did something, as ledger entries name them (kernel/actor.ts TrailActor). */
export const ActorSchema = Type.Object(
  {
    kind: Type.Union([Type.Literal('user'), Type.Literal('api_key'), Type.Literal('service'), Type.Literal('operator')]),
    user_id: Type.Optional(Type.String()),
    email: Type.Optional(Type.String()),
    key_id: Type.Optional(Type.String()),
    key_prefix: Type.Optional(Type.String()),
    task: Type.Optional(Type.String()),
  },
  { description: 'Who did it: a user, the company API key, the service itself (task: retention), or the operator', ...component('Actor') },
);

/** A signed key transition (docs/ledger-format.md §12): the new key endorsed by the old one, and the old by the new. */
export const KeyTransitionSchema = Type.Object(
  {
    old_key_id: Type.String(),
    old_public_key: Type.String(),
    new_key_id: Type.String(),
    new_public_key: Type.String(),
    created_at: Type.String(),
    statement: Type.String(),
    old_signature: Type.String(),
    new_signature: Type.String(),
  },
  { description: 'A signed key transition (docs/ledger-format.md §12)' },
);
