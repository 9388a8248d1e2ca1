// @audit-ledger/sdk: send audit events to audit-ledger without losing or duplicating any, read
// them back, and verify what you got with the keys you pinned.
export { type AuditEvent, AuditLedgerClient, type ClientOptions, type ClientStats, createClient, type Spool } from './client.js';
export { idempotencyKeyOf, retryDelay } from './delivery.js';
export { agentKeyRegistration, type AgentSigner, agentSigner, signAgentEvent, storedView } from './agent-signing.js';
export { type Problem, ProblemError } from './problem.js';
export { asEntryBody, type PublicKeys, type ReceiptCheck, type ReceiptEntry, type ReceiptFailureCode, verifyReceipt } from './receipts.js';
export { type CheckpointVerdict, CheckpointWatcher, checkpointProblems, type InclusionProof, type SignedCheckpoint, verifyInclusion, type WatchOptions } from './checkpoints.js';
export { ApprovalDenied, ApprovalHandle, ApprovalMismatch, Approvals, argumentsHash, type GuardOptions, type RequestOptions, type WaitOptions } from './approvals.js';
export type * from './api.js';
export type { operations, paths } from './api-types.js';
