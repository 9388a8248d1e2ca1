// The state an append group is built from and the plan it becomes, shared by the planner and
// the two ways of committing (appender.ts).
import type { ChainHead, ChainWrite, CheckpointRow } from '../../store/chain.js';
import type { TreeEdge } from '@audit-ledger/core';
import type { EnvelopeField, JsonObject } from '@audit-ledger/core';
import type { AppendedEvent } from './errors.js';

/** An event ready to be sequenced (ingestion/input.ts prepares it): exactly the client-supplied parts of the hashed body. */
export interface PreparedEvent {
  event_type: string;
  data: JsonObject;
  /** Canonical JSON of data, as stored (and compared for idempotent repeats). */
  dataJson: string;
  envelope: Record<EnvelopeField, string | null>;
  /** Format version 3: the client's event_id, hashed beside the envelope. */
  eventId: string | null;
  /** Format version 3: canonical JSON of skeletonLinks(data), or null when it names none. */
  linksJson: string | null;
  extra: JsonObject | null;
  extraJson: string | null;
  /** The agent's own signature over the event (format version 4), checked against the register before the append (agents/agent-keys.ts). */
  agentSignature?: { keyId: string; signature: string } | undefined;
  /**
   * The key came in the Idempotency-Key header: reusing it for different content is refused
   * (422). A key in the body is the client's own scheme: a reuse for different content is
   * appended anyway and marked (docs/integrations.md, "Idempotency keys").
   */
  strictKey: boolean;
}

export interface Pending {
  events: PreparedEvent[];
  /** Sign a checkpoint for whatever is not yet covered, whatever the interval says. */
  checkpoint?: boolean;
  /** Times its group was built on a head that then moved. */
  headMoves?: number;
  resolve(r: AppendedEvent[]): void;
  reject(e: unknown): void;
}

/** What one group's appends are built on: the chain as committed, plus any groups still committing. */
export interface ChainState {
  head: ChainHead;
  edge: TreeEdge;
  latest: CheckpointRow | undefined;
  /** Whether the stored tree extends the latest checkpoint (checked once, when a checkpoint is about to be signed). */
  consistent: () => Promise<boolean>;
}

/** An idempotency key's first use: compared with repeats, and answered to them. */
export interface KeyUse {
  event_type: string;
  /** Canonical data text; null once erased (a repeat can then no longer be told from a conflict). */
  data: string | null;
  result: AppendedEvent;
}

/** One group, sequenced, hashed and signed: the answers and the writes that make them true. */
export interface Plan {
  outcomes: Array<AppendedEvent[] | Error>;
  /** The write; its rows are signed once `signed` resolves (or, left unsigned, by the writer). */
  write: ChainWrite;
  signed: Promise<void>;
  /** Idempotency keys this group adds a use of (an original or a conflict), with every use known once it commits. */
  keys: Array<[string, KeyUse[]]>;
  /** When entries remain without a checkpoint: the clock time at which one is due. */
  checkpointDueAt?: number;
}

/** A company's appends on a store with a ChainWriter: the chain as this process built it, and the writes in flight. */
export interface Pipeline {
  state?: ChainState;
  /** Keys used by groups that are still committing: every use of each, the original first. */
  keys: Map<string, KeyUse[]>;
  inFlight: Set<Promise<void>>;
  /** A write failed: the writes built on it fail too; wait for them, then reload the state. */
  failed: boolean;
  /** Groups whose write found the head moved, in order: appended again from the stored head. */
  retry: Pending[][];
  /** Resolves once the last group's write has been handed to the writer (or failed before). */
  handedOver: Promise<void>;
  /** Set while the drain waits with room for another group: a new request wakes it. */
  wake?: () => void;
  /** A write found its signing key retired: the rotated key, loaded before anything is built again. */
  keyReload?: Promise<void>;
}
