// Schemas shared by several routes (one definition each, so the OpenAPI document names one shape).
import Type from 'typebox';

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
export const JsonObjectSchema = Type.Object({}, { additionalProperties: true });

export const CheckpointSchema = Type.Object(
  {
    origin: Type.String({ description: '`<LEDGER_ORIGIN>/<company_id>`' }),
    tree_size: Type.Integer({ description: 'Number of entries the tree covers (seq 0 … tree_size − 1)' }),
    root_hash: Type.String({ description: 'RFC 6962 root, lowercase hex (base64 inside the note)' }),
    timestamp: Type.String({ format: 'date-time' }),
    key_id: Type.String({ description: 'The signing key, as listed by /integrity/keys' }),
    note: Type.String({ description: 'The C2SP signed note, exactly as signed' }),
    cosignatures: Type.Optional(
      Type.Array(
        Type.Object({
          witness: Type.String({ description: "The witness's name" }),
          timestamp: Type.Integer({ description: 'POSIX seconds the witness cosigned at' }),
          line: Type.String({ description: 'The cosignature: a C2SP note signature line (tlog-cosignature, cosignature/v1)' }),
        }),
        { description: 'Cosignatures of independent witnesses (WITNESSES), each checked against the witness key when received' },
      ),
    ),
    cosigned_note: Type.Optional(Type.String({ description: 'The note with the witness cosignature lines appended: one C2SP signed note with every signature' })),
  },
  { description: 'A signed checkpoint (C2SP tlog-checkpoint)' },
);
