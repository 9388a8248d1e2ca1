// The shapes of the service's answers, named, from the types generated out of its OpenAPI
// document (api-types.ts, by openapi-typescript: `npm run openapi`). A test fails when the
// document changes without them, so these cannot drift from what the service answers.
import type { operations } from './api-types.js';

type JsonOf<T> = T extends { content: { 'application/json': infer B } } ? B : never;
/** The JSON answer of an operation's success status (200, or 201 where it creates). */
export type Answer<Op extends keyof operations> = operations[Op]['responses'] extends { 200: infer R } ? JsonOf<R> : operations[Op]['responses'] extends { 201: infer R } ? JsonOf<R> : never;
/** The JSON body an operation takes. */
export type RequestBody<Op extends keyof operations> = operations[Op] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

export type LedgerEntry = Answer<'getLog'>;
export type EntryCheck = Answer<'verifyLog'>;
export type EntryPage = Answer<'listLogs'>;
export type InclusionProofAnswer = Answer<'getInclusionProof'>;
export type CheckpointAnswer = Answer<'getCheckpoint'>;
export type ConsistencyProof = Answer<'getConsistencyProof'>;
export type IntegrityStatus = Answer<'getIntegrityStatus'>;
export type VerificationJob = Answer<'getVerificationJob'>;
export type SigningKeys = Answer<'listSigningKeys'>;
export type EvidenceBundle = Answer<'getEvidenceBundle'>;
export type ReplaySession = Answer<'createReplay'>;
export type ReplayInput = RequestBody<'createReplay'>;
export type Timeline = Answer<'getReplayTimeline'>;
export type CausalGraph = Answer<'getReplayCausalGraph'>;
export type Staleness = Answer<'getReplayStaleness'>;
export type RootCause = Answer<'getReplayRootCause'>;
export type HitlRejectionInput = RequestBody<'rejectDecision'>;
export type HitlRejection = Answer<'rejectDecision'>;
export type BatchAnswer = Answer<'appendLogBatch'>;
export type Approval = Answer<'getApproval'>;
export type ApprovalRequestInput = RequestBody<'requestApproval'>;
export type ApprovalCheckAnswer = Answer<'checkApproval'>;
export type PolicyVersion = Answer<'getPolicyVersion'>;
export type Decision = Answer<'getDecision'>;
export type Incident = Answer<'getIncident'>;
