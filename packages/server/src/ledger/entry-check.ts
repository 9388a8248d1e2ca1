// One entry checked on its own, without HTTP (GET /logs/{id}/verify): the core's record check
// (verifyRecord: its hash from the stored text, content, signature, and the links of both
// neighbours, of which only the links are read), and whether it is proven to be in the tree of
// the latest checkpoint (whose signature must hold).
import { agentSignatureState, checkpointProblems, entryLeafHash, fromHex, idempotencyMarkProblem, inclusionProof, recordToEntry, verifyInclusion, verifyRecord } from '@audit-ledger/core';
import type { AgentKeyStore } from '../store/agent-keys.js';
import type { IntegrityStore } from '../store/integrity.js';
import type { LedgerStore } from '../store/ledger.js';
import { iso } from '../kernel/time.js';
import type { KeyStore } from '../store/keys.js';
import { serviceKeys } from './key-periods.js';
import type { EntryCheck } from '../kernel/shapes.js';
import { checkpointView, treeReader } from './proofs.js';

export type { EntryCheck } from '../kernel/shapes.js';

export interface EntryCheckerDeps {
  ledger: LedgerStore;
  /** The service's keys with their signing periods (ledger/key-periods.ts). */
  signingKeys: Pick<KeyStore, 'list' | 'transitions'>;
  clock: () => number;
  /** The checkpoint key name (LEDGER_ORIGIN). */
  ledgerOrigin: string;
  /** The company's agent key register, for entries an agent signed. */
  agentKeys: Pick<AgentKeyStore, 'byIds'>;
  /** The earliest entry of an idempotency key: what the entry's idempotency mark must say (§10). */
  marks: Pick<IntegrityStore, 'firstWithKey'>;
}

export class EntryChecker {
  constructor(private readonly deps: EntryCheckerDeps) {}

  /** The entry's check, or undefined when the company has no entry with this id. */
  async check(companyId: string, logId: string): Promise<EntryCheck | undefined> {
    const { ledger } = this.deps;
    const row = await ledger.getEntry(companyId, logId);
    if (!row) return undefined;
    const [neighbours, head, keys, checkpoint] = await Promise.all([
      ledger.entryLinks(companyId, [row.seq - 1, row.seq + 1]),
      ledger.getChainHead(companyId),
      serviceKeys(this.deps.signingKeys),
      ledger.latestCheckpoint(companyId),
    ]);
    const prev = neighbours.find((n) => n.seq === row.seq - 1);
    const next = neighbours.find((n) => n.seq === row.seq + 1);
    // An erased entry is accounted for by the erasure record its erasure_id names.
    const record = row.erasure_id ? await ledger.getEntry(companyId, row.erasure_id) : undefined;
    // The core's check of a stored record: its own checks (hash of the stored text, content,
    // signature in its key's period) and its neighbours' links.
    const verdict = verifyRecord({
      record: row,
      prev: prev ?? null,
      next: next ?? null,
      headSeq: head?.lastSeq ?? null,
      publicKey: keys.publicKeys.get(row.key_id),
      keyPeriod: keys.periods.get(row.key_id),
      erasureRecord: record,
    });
    // The idempotency mark (not hashed, derivable: docs/ledger-format.md §10), added, changed or removed.
    const first = row.idempotency_key === null ? undefined : await this.deps.marks.firstWithKey(companyId, row.idempotency_key);
    const markProblem = idempotencyMarkProblem(row, first && first.seq < row.seq ? first.log_id : null);
    if (markProblem) {
      verdict.problems.unshift({ kind: 'idempotency_mark', detail: markProblem });
      verdict.chain_valid = false;
    }
    const agent = row.agent_key_id === null && row.agent_signature === null ? { state: 'none' as const } : agentSignatureState(recordToEntry(row), await this.deps.agentKeys.byIds(companyId, row.agent_key_id ? [row.agent_key_id] : []));
    // Proven only when the stored hash is what the fields hash to (else the leaf is not this entry's).
    const hashHolds = !verdict.problems.some((p) => p.kind === 'hash_mismatch');
    let merkleIncluded = false;
    if (hashHolds && checkpoint && row.seq < checkpoint.tree_size && checkpointProblems(checkpoint, this.deps.ledgerOrigin, keys.publicKeys.get(checkpoint.key_id), keys.periods.get(checkpoint.key_id)).length === 0) {
      // A damaged stored tree (a missing hash) simply means not proven.
      const proof = await inclusionProof(treeReader(ledger, companyId), row.seq, checkpoint.tree_size).catch(() => undefined);
      merkleIncluded = proof !== undefined && verifyInclusion(row.seq, checkpoint.tree_size, entryLeafHash(row.hash), proof, fromHex(checkpoint.root_hash));
    }
    return {
      log_id: row.log_id,
      hash: row.hash,
      seq: row.seq,
      key_id: row.key_id,
      verified_at: iso(this.deps.clock()),
      ...verdict,
      merkle_included: merkleIncluded,
      checkpoint: checkpoint ? checkpointView(checkpoint) : null,
      agent_signature: {
        state: agent.state,
        key_id: 'key_id' in agent ? agent.key_id : null,
        agent_id: agent.state === 'valid' ? agent.agent_id : null,
        detail: agent.state === 'invalid' ? agent.detail : null,
      },
      erasure: verdict.erased && record ? erasureView(record, row.erased_at) : null,
    };
  }
}

function erasureView(record: { log_id: string; seq: number; data: string | null }, erasedAt: string | null) {
  const data = (record.data === null ? {} : JSON.parse(record.data)) as { legal_basis?: unknown; actor?: unknown };
  return { log_id: record.log_id, seq: record.seq, erased_at: erasedAt, legal_basis: typeof data.legal_basis === 'string' ? data.legal_basis : null, actor: data.actor ?? null };
}
