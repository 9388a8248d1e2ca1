// Submits every company's newest checkpoint to the configured witnesses (C2SP tlog-witness):
// `old <size the witness last cosigned>`, the consistency proof from that size, and the signed
// note. A cosignature is checked against the witness's key and kept with the checkpoint; a witness
// that answers with its own size (409, text/x.tlog.size) is asked again from that size; a witness
// that refuses the checkpoint as inconsistent with what it cosigned before (409 at the same size,
// 422, or a size beyond ours) is a refusal: the history it saw is not the one the service shows
// now. Refusals are counted (integrity status, metrics) and logged; nothing is hidden.
import { consistencyProof, parseNote, parseWitnessKey, toBase64, verifyCosignature, type WitnessKey } from '@audit-ledger/core';
import type { Metrics } from '../ops/metrics.js';
import type { AccountStore } from '../store/accounts.js';
import type { CheckpointRow } from '../store/chain.js';
import type { KeyStore } from '../store/keys.js';
import type { LedgerStore } from '../store/ledger.js';
import type { WitnessStore } from '../store/witnesses.js';
import { iso } from '../kernel/time.js';
import { MAX_WITNESS_ANSWER_BYTES, readBounded } from '../egress/bounded.js';
import { treeReader } from '../ledger/proofs.js';
import type { OperatorFetch } from '../egress/address-policy.js';

export interface WitnessConfig {
  url: string;
  verifierKey: string;
}

export interface WitnessSubmitterDeps {
  witnesses: WitnessConfig[];
  witnessStore: WitnessStore;
  ledger: LedgerStore;
  accounts: Pick<AccountStore, 'companyIds'>;
  metrics: Metrics;
  clock: () => number;
  warn: (obj: Record<string, unknown>, msg: string) => void;
  /** The signed key transitions, sent to a witness that does not know the key of a checkpoint. */
  signingKeys: Pick<KeyStore, 'transitions'>;
  timeoutMs?: number;
  /** Requests under the address policy (egress/address-policy.ts operatorFetch). */
  send: OperatorFetch;
}

type Outcome = { kind: 'cosigned' } | { kind: 'behind'; size: number } | { kind: 'refused'; reason: string } | { kind: 'failed'; reason: string } | { kind: 'unknown_key'; reason: string };

export class WitnessSubmitter {
  private readonly witnesses: Array<WitnessConfig & { key: WitnessKey }>;

  constructor(private readonly deps: WitnessSubmitterDeps) {
    this.witnesses = deps.witnesses.map((w) => ({ ...w, key: parseWitnessKey(w.verifierKey) }));
  }

  get enabled(): boolean {
    return this.witnesses.length > 0;
  }

  /** One pass: every company's newest checkpoint to every witness that has not cosigned it. */
  async pass(): Promise<void> {
    // Each company's latest checkpoint by its key (company_id, tree_size): no scan of the checkpoints kept.
    for (const companyId of await this.deps.accounts.companyIds()) {
      const cp = await this.deps.ledger.latestCheckpoint(companyId);
      if (!cp) continue;
      const have = new Set((await this.deps.witnessStore.cosignatures(cp.company_id, cp.tree_size)).map((c) => c.witness));
      for (const w of this.witnesses) {
        if (!have.has(w.key.name)) await this.submit(cp, w);
      }
    }
  }

  private async submit(cp: CheckpointRow, w: WitnessConfig & { key: WitnessKey }): Promise<void> {
    const { witnessStore } = this.deps;
    const at = () => iso(this.deps.clock());
    let old = Number((await witnessStore.state(cp.company_id, w.key.name))?.tree_size ?? 0);
    // At most three tries: again from the size a 409 told us, and again once the witness was sent
    // the key transitions it lacked (a 403 after a rotation).
    let sentTransitions = false;
    for (let attempt = 0; attempt < 3; attempt++) {
      const outcome = await this.ask(cp, w, old);
      if (outcome.kind === 'cosigned') return;
      if (outcome.kind === 'unknown_key' && !sentTransitions) {
        sentTransitions = true;
        if (await this.sendTransitions(w)) continue;
      }
      if (outcome.kind === 'behind' && attempt === 0 && outcome.size !== old && outcome.size <= cp.tree_size) {
        await witnessStore.witnessSize(cp.company_id, w.key.name, outcome.size, at());
        old = outcome.size;
        continue;
      }
      // Every refusal counts: an inconsistent history, and a checkpoint whose key the witness does not trust.
      const refused = outcome.kind === 'refused' || outcome.kind === 'behind' || outcome.kind === 'unknown_key';
      const reason = outcome.kind === 'behind' ? `the witness has cosigned size ${outcome.size} of this log, which this checkpoint (size ${cp.tree_size}) does not extend` : outcome.reason;
      await witnessStore.failed(cp.company_id, w.key.name, reason, refused, at());
      if (refused) {
        this.deps.metrics.witnessRefusals.inc({ witness: w.key.name });
        this.deps.warn(
          { company_id: cp.company_id, witness: w.key.name, tree_size: cp.tree_size, reason },
          outcome.kind === 'unknown_key'
            ? 'a witness refused a checkpoint: it does not trust the signing key, even with the signed key transitions (configure the key on the witness, or check its logs file)'
            : 'a witness refused a checkpoint: its view of this log differs (split view or rewritten history)',
        );
      }
      return;
    }
  }

  /** POSTs the signed key transitions to the witness (its /add-key-transitions); whether it took them. */
  private async sendTransitions(w: WitnessConfig & { key: WitnessKey }): Promise<boolean> {
    const transitions = await this.deps.signingKeys.transitions();
    if (transitions.length === 0) return false;
    try {
      const res = await this.deps.send(`${w.url}/add-key-transitions`, { method: 'POST', body: JSON.stringify({ transitions }), headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(this.deps.timeoutMs ?? 10_000) });
      await readBounded(res, MAX_WITNESS_ANSWER_BYTES).catch(() => '');
      return res.status === 200;
    } catch {
      return false;
    }
  }

  private async ask(cp: CheckpointRow, w: WitnessConfig & { key: WitnessKey }, old: number): Promise<Outcome> {
    const proof = old > 0 && old < cp.tree_size ? await consistencyProof(treeReader(this.deps.ledger, cp.company_id), old, cp.tree_size) : [];
    const body = `old ${old}\n${proof.map((h) => `${toBase64(h)}\n`).join('')}\n${cp.note}`;
    let res: Response;
    try {
      res = await this.deps.send(`${w.url}/add-checkpoint`, { method: 'POST', body, headers: { 'content-type': 'text/plain' }, signal: AbortSignal.timeout(this.deps.timeoutMs ?? 10_000) });
    } catch (err) {
      return { kind: 'failed', reason: `no answer: ${(err as Error).message}` };
    }
    let text: string;
    try {
      text = await readBounded(res, MAX_WITNESS_ANSWER_BYTES);
    } catch (err) {
      return { kind: 'failed', reason: `${res.status}: ${(err as Error).message}` };
    }
    if (res.status === 200) {
      const noteText = parseNote(cp.note).text;
      const line = text.split('\n').map((l) => `${l}\n`).find((l) => verifyCosignature(noteText, l, w.key).ok);
      if (!line) return { kind: 'failed', reason: 'the answer holds no valid cosignature by the configured key' };
      const { timestamp } = verifyCosignature(noteText, line, w.key);
      await this.deps.witnessStore.cosigned({ company_id: cp.company_id, tree_size: cp.tree_size, witness: w.key.name, timestamp: timestamp as number, line }, iso(this.deps.clock()));
      this.deps.metrics.witnessCosignatures.inc({ witness: w.key.name });
      return { kind: 'cosigned' };
    }
    if (res.status === 409 && (res.headers.get('content-type') ?? '').startsWith('text/x.tlog.size')) {
      const size = Number(text.trim());
      if (Number.isSafeInteger(size) && size !== old) return { kind: 'behind', size };
      return { kind: 'refused', reason: `409: the witness cosigned size ${old} with a different root` };
    }
    if (res.status === 422) return { kind: 'refused', reason: '422: the consistency proof from the size the witness cosigned does not verify' };
    if (res.status === 403) return { kind: 'unknown_key', reason: `403: the witness does not trust the key that signed this checkpoint: ${text.trim().slice(0, 300)}` };
    return { kind: 'failed', reason: `${res.status}: ${text.trim().slice(0, 200)}` };
  }
}
