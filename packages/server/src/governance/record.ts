// The governance layer's ledger entries: every request, decision, check, policy version and
// incident change is appended to the company's chain under the reserved source
// `audit-ledger/governance` (clients cannot forge one through POST /logs), naming who did it, and
// committed before the change is answered, by the service's one recorder (ingestion/recorder.ts).
// docs/governance.md lists the event types. Here: the source, and how values are bound by hash.
import { createHash } from 'node:crypto';
import { argumentsHash, type Json } from '@audit-ledger/core';
import { RESERVED_SOURCE_PREFIX } from '../store/columns.js';

export const GOVERNANCE_SOURCE = `${RESERVED_SOURCE_PREFIX}governance`;

export type { Placement } from '../ingestion/recorder.js';

/** The arguments hash: lowercase hex SHA-256 of the RFC 8785 canonical JSON of a value (the core's rule, with its vectors); how arguments, inputs and policy texts are bound. */
export const canonicalHash = (value: unknown): string => argumentsHash(value as Json);

/** Lowercase hex SHA-256 of a text (UTF-8). */
export const textHash = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');
