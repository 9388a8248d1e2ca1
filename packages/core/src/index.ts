// @audit-ledger/core: the ledger format, pure. Hashing, the Merkle tree and its proofs, signed
// checkpoints, key transitions, entry and chain verification, the full scan, and offline bundle
// verification. No I/O: callers read and pass in; no Node built-in outside the '#crypto' seam,
// so the same code runs in the server, a browser, the SDK and the standalone verifier.
// Specified in docs/ledger-format.md.
export * from '#crypto';
export type { CryptoSeam } from './crypto/types.js';
export { CoreError, type CoreErrorCode } from './errors.js';
export { canonicalJson, type Json, type JsonObject } from './json.js';
export { argumentsHash } from './arguments-hash.js';
export { retryAfterMs, retryDelayMs, type RetryPolicy } from './retry.js';
export {
  AGENT_SIGNED_FORMAT_VERSION,
  canonicalEntryText,
  commitsContent,
  hashesLinks,
  ENVELOPE_FIELDS,
  type EntryBody,
  entryBody,
  entryHash,
  type EnvelopeField,
  FORMAT_VERSIONS,
  GENESIS_PREV_HASH,
  HASHED_FIELDS,
  HASHED_FIELDS_V2,
  HASHED_FIELDS_V3,
  HASHED_FIELDS_V4,
  hashedFields,
  LEDGER_FORMAT_VERSION,
  type LedgerEntry,
} from './entry.js';
export { LINK_IDS, LINK_LISTS, linksTextOfDataText, REF_MEMBERS, skeletonLinks, skeletonLinksText } from './links.js';
export { canonicalRecordText, type CheckpointRecord, type EntryRecord, recomputeHash, recordContentState, recordToEntry } from './record.js';
export {
  ADMIN_SOURCE,
  CONTENT_COMMITMENT_CONTEXT,
  CONTENT_SALT_BYTES,
  contentCommitment,
  type ContentState,
  contentState,
  contentText,
  ERASABLE_SERVICE_ENTRY,
  erasableSource,
  ERASURE_EVENT_TYPE,
  erasureRecordProblem,
} from './content.js';
export {
  AGENT_KEY_PROOF_CONTEXT,
  AGENT_SIGNATURE_CONTEXT,
  AGENT_SIGNED_FIELDS,
  agentKeyProofMessage,
  type AgentKey,
  type AgentSignatureState,
  type AgentSignedEvent,
  agentSignatureState,
  agentSignedMessage,
  agentSignatureChecks,
  AgentSignatureTally,
  agentSignedText,
  agentSignedTextOfCanonical,
  isAgentSigned,
  verifyAgentSignature,
} from './agent-signature.js';
export { ENTRY_SIGNATURE_CONTEXT, entrySignatureMessage, keyIdOf, SIGNATURE_ALGORITHM, verifyEntrySignature } from './signature.js';
export { parseTrustedKeys, publicKeyPem, rawKeyFromBase64, rawKeyFromPem, type TrustedKey, trustedKey } from './keys.js';
export {
  type Checkpoint,
  checkpointProblems,
  checkpointText,
  companyOrigin,
  ED25519_ALG,
  type NoteSignature,
  noteKeyId,
  noteSignatureLine,
  noteSignedBy,
  parseCheckpointText,
  parseNote,
  SIGNATURE_LINE_PREFIX,
  verifierKey,
} from './checkpoint.js';
export { KEY_TRANSITION_CONTEXT, type KeyTransition, type KeyTransitionFailure, keyTransitionText, verifyKeyTransition } from './key-transition.js';
export {
  consistencyRanges,
  EMPTY_ROOT,
  entryLeafHash,
  foldSubtrees,
  type Hash,
  HASH_SIZE,
  inclusionRanges,
  isStoredLevel,
  type LeafRange,
  leafHash,
  nodeHash,
  referenceRoot,
  rootWithLeaves,
  splitPoint,
  splitStoredHashIndex,
  storedHashCount,
  storedLevelIndexes,
  storedHashIndex,
  type Subtree,
  subtreesOf,
  TREE_STRIDE,
  TreeEdge,
  verifyConsistency,
  verifyInclusion,
} from './merkle.js';
export { consistencyProof, type EntryHashReader, type HashReader, inclusionProof, inclusionProofs, layeredReader, missingTreeHash, readEdge, readRoot } from './tree.js';
export { VIOLATION_KINDS, type ViolationKind } from './violations.js';
export { applyTransitions, instantOf, type KeyPeriod, keyNotActive, OPEN_PERIOD, type PeriodStep } from './key-periods.js';
export { type EntryNeighbourhood, type EntryVerdict, type RecordNeighbourhood, verifyEntry, verifyRecord, type Violation } from './verify.js';
export { type EntryAlone, type EntryCheckCode, type EntryCheckOptions, type EntryKey, type EntryProblem, checkEntryAlone, checkEntrySignature, checkRecordAlone, isSignatureCode } from './entry-check.js';
export { type ScanCounts, Scanner, type ScanOptions, type ScanPage, type ScanState, type ScanViolation, START as SCAN_START, treeHashRange } from './scan.js';
export { scanSegment, SEGMENT_LEVEL, SEGMENT_SIZE, SegmentJoiner, type SegmentResult } from './scan-segments.js';
export {
  type BundleTimestamp,
  bundleTimestampChecks,
  type Check,
  type CheckCode,
  checkCheckpointNote,
  checkpointJsonDiffers,
  EVIDENCE_BUNDLE_FORMAT,
  followTransitions,
  keysWithPeriods,
  type BundleOptions,
  type VerificationReport,
  verifyBundle,
} from './bundle.js';
export { ExportVerifier, KEY_ROTATION_EVENT_TYPE } from './export-verifier.js';
export { idempotencyMarkProblem, type MarkedEntry } from './idempotency-mark.js';
export { hasSmallOrder, isCanonicalPoint } from './crypto/ed25519-strict.js';
export { STREAM_BATCH_FORMAT, STREAM_CARRIERS, type StreamBatchHeader, StreamCopyVerifier, type StreamEntryMessage, type StreamMessage, streamMessageOf, toBase64Url } from './stream.js';
export {
  COSIGNATURE_V1_ALG,
  type Cosignature,
  cosignatureKeyId,
  cosignatureLine,
  cosignedBy,
  cosignedMessage,
  parseCosignatureLine,
  parseWitnessKey,
  splitVerifierKey,
  verifyCosignature,
  type WitnessKey,
  witnessQuorumCheck,
  witnessVerifierKey,
} from './cosignature.js';
export { COMPLIANCE_REPORT_FORMAT, INCIDENT_REPORT_FORMAT, REPORT_SIGNATURE_CONTEXT, reportDigest, reportSignatureMessage, type SignedReport, verifyReport } from './report.js';
export { decodeEntryBundle, encodeEntryBundle, parseTilePath, TILE_HEIGHT, TILE_WIDTH, tileHashIndexes, tileIndexPath, tilePath, type TileRef, tileSeqs, tileWidthAt } from './tiles.js';
export { checkpointImprint, OID_SHA256, parseTimeStampResponse, parseTimeStampToken, timestampProblems, timeStampRequest, type TimeStampToken } from './rfc3161.js';
