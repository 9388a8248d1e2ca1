// Reading and proving stored entries, without HTTP: one entry, a filtered page, one entry's check
// (ledger/entry-check.ts), and its inclusion proof with the rule that only signed trees are
// proven. routes/logs.ts parses (the cursor too), calls one method and shapes the answer.
import { entryLeafHash, toHex } from '@audit-ledger/core';
import type { Config } from '../kernel/config.js';
import { NotFoundError, NotYetCheckpointedError, TreeSizeOutOfRangeError } from '../kernel/domain-error.js';
import type { EntryCheck, EntryChecker } from '../ledger/entry-check.js';
import type { InclusionProofView } from '../kernel/shapes.js';
import { checkpointView, type InclusionView, inclusionViews } from '../ledger/proofs.js';
import { count } from '../kernel/plural.js';
import type { LogEntryRow } from '../store/chain.js';

/** A stored entry (its view is the route's). */
export type { LogEntryRow };
import type { DataCondition, EntryFilter, LedgerStore } from '../store/ledger.js';
import { MAX_SEARCH_WAIT_MS, type SearchIndex } from '../store/search-index.js';
import { InputError, SearchIndexOffError } from '../kernel/domain-error.js';
import type { GovernanceStore } from '../store/governance.js';
import { checkView, EXECUTION_TYPES, type GovernanceMarks } from '../governance/execution-check.js';

/** The entries whose checks the governance layer records (an execution naming an approval, an evaluation naming a policy). */
const checked = (row: LogEntryRow) => EXECUTION_TYPES.has(row.event_type) || row.event_type === 'policy.evaluated';

export interface EntriesDeps {
  ledger: LedgerStore;
  /** The governance checks recorded beside entries (store/governance.ts), when there is a governance layer. */
  governance?: Pick<GovernanceStore, 'getChecks'>;
  entryChecker: Pick<EntryChecker, 'check'>;
  config: Pick<Config, 'checkpointIntervalMs'>;
  /** The index of words inside events, kept after the commit (store/search-index.ts); words cannot be searched without it. */
  searchIndex?: Pick<SearchIndex, 'running' | 'indexedSeq' | 'waitFor'>;
}

export type { InclusionProofView } from '../kernel/shapes.js';

export class Entries {
  constructor(private readonly deps: EntriesDeps) {}

  /** The company's entry (another company's log_id is not found). */
  async get(companyId: string, logId: string): Promise<LogEntryRow> {
    const row = await this.deps.ledger.getEntry(companyId, logId);
    if (!row) throw new NotFoundError(`No log ${logId}`);
    return row;
  }

  /** A page of entries in seq order (or newest first). */
  list(companyId: string, filter: EntryFilter): Promise<LogEntryRow[]> {
    return this.deps.ledger.listEntries(companyId, filter);
  }

  /**
   * The governance checks made on these entries at ingestion (approval_check, policy_check), by
   * log_id: kept beside the entries, never in them. One query for a page, none when no entry of
   * it is of a checked type.
   */
  async marks(companyId: string, rows: LogEntryRow[]): Promise<Map<string, GovernanceMarks>> {
    const ids = rows.filter(checked).map((r) => r.log_id);
    const out = new Map<string, GovernanceMarks>();
    if (ids.length === 0 || !this.deps.governance) return out;
    for (const c of await this.deps.governance.getChecks(companyId, ids)) out.set(c.log_id, { ...out.get(c.log_id), ...checkView(c) });
    return out;
  }

  /**
   * Search inside events: every word of `q` must occur in the entry's data (a word ending in * is
   * a prefix), and every `where` condition must hold (`data.customer_id = "c-42"`,
   * `data.amount > 100`), with the list's other filters; newest first. Erased content is not found.
   * Words are found in the entries the index covers: `indexedSeq` says up to which seq (null without
   * an index), after waiting for `waitForSeq` when asked (at most MAX_SEARCH_WAIT_MS).
   */
  async search(
    companyId: string,
    q: { q?: string | undefined; where?: string[] | undefined; waitForSeq?: number | undefined } & Omit<EntryFilter, 'text' | 'where'>,
  ): Promise<{ rows: LogEntryRow[]; indexedSeq: number | null }> {
    const { q: text, where, waitForSeq, ...filter } = q;
    const terms = parseTerms(text);
    const conditions = (where ?? []).map((w, i) => parseCondition(w, `/querystring/where/${i}`));
    if (terms.length === 0 && conditions.length === 0) throw new InputError([{ field: '/querystring/q', message: 'give words to find, or a where condition' }]);
    const index = this.deps.searchIndex?.running ? this.deps.searchIndex : undefined;
    if (terms.length > 0 && !index) throw new SearchIndexOffError();
    let indexedSeq: number | null = null;
    if (index) {
      // Waiting for a seq the chain does not hold yet would only run out the clock: the head's is the most.
      const head = waitForSeq === undefined ? undefined : await this.deps.ledger.getChainHead(companyId);
      indexedSeq = head ? await index.waitFor(companyId, Math.min(waitForSeq as number, head.lastSeq), MAX_SEARCH_WAIT_MS) : await index.indexedSeq(companyId);
    }
    const rows = await this.deps.ledger.listEntries(companyId, { ...filter, text: terms, where: conditions });
    return { rows, indexedSeq };
  }

  /** One entry's hash, links, signature and inclusion under the latest checkpoint. */
  async check(companyId: string, logId: string): Promise<EntryCheck> {
    const result = await this.deps.entryChecker.check(companyId, logId);
    if (!result) throw new NotFoundError(`No log ${logId}`);
    return result;
  }

  /**
   * The entry's inclusion proof in the tree of treeSize (by default the latest checkpoint's),
   * which must hold the entry and have been signed (RFC 9162 §2.1.3).
   */
  async proof(companyId: string, logId: string, treeSize?: number): Promise<InclusionProofView> {
    const { ledger, config } = this.deps;
    const row = await this.get(companyId, logId);
    const latest = await ledger.latestCheckpoint(companyId);
    const signed = latest?.tree_size ?? 0;
    const size = treeSize ?? signed;
    if (row.seq >= signed && treeSize === undefined) throw new NotYetCheckpointedError(`Entry ${row.seq} (the latest checkpoint covers ${count(signed, 'entry', 'entries')}) is`, config.checkpointIntervalMs);
    if (size <= row.seq || size > signed) throw new TreeSizeOutOfRangeError('/querystring/tree_size', `must be from ${row.seq + 1} to ${signed}`, `tree_size must be from ${row.seq + 1} (the entry's seq + 1) to ${signed} (the latest checkpoint)`);
    const [[view], checkpoint] = await Promise.all([inclusionViews(ledger, companyId, [row.seq], size), size === signed ? latest : ledger.getCheckpoint(companyId, size)]);
    return {
      log_id: row.log_id,
      seq: row.seq,
      entry_hash: row.hash,
      leaf_hash: toHex(entryLeafHash(row.hash)),
      ...(view as InclusionView),
      checkpoint: checkpoint ? checkpointView(checkpoint) : null,
    };
  }
}

/** The most words one search takes, and conditions. */
export const MAX_TERMS = 10;
export const MAX_CONDITIONS = 5;

/** Words to find: letters, digits and - _ . @ : / (other characters separate words); a trailing * makes a prefix. */
export function parseTerms(q: string | undefined): string[] {
  if (q === undefined) return [];
  const terms = q
    .split(/[^\p{L}\p{N}\-_.@:/*]+/u)
    .map((t) => t.replace(/\*+(?=.)/g, ''))
    .filter((t) => t.replace(/\*/g, '').length > 0);
  if (terms.length > MAX_TERMS) throw new InputError([{ field: '/querystring/q', message: `at most ${MAX_TERMS} words` }]);
  return terms;
}

/** A UTF-16 surrogate without its pair: text no UTF-8 store can hold. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const CONDITION = /^\s*data((?:\.[A-Za-z_][A-Za-z0-9_]*){1,8})\s*(=|!=|>=|<=|>|<)\s*(.+?)\s*$/;

/** `data.a.b OP value`, value a JSON scalar (a string in double quotes, a number, true, false, null). */
export function parseCondition(text: string, field: string): DataCondition {
  const m = CONDITION.exec(text);
  const bad = (message: string) => new InputError([{ field, message }]);
  if (!m) throw bad('must be data.<key>[.<key>…] followed by =, !=, >, >=, < or <= and a JSON value, e.g. data.amount > 100 or data.customer_id = "c-42"');
  let value: unknown;
  try {
    value = JSON.parse(m[3] as string);
  } catch {
    throw bad('the value must be JSON: a string in double quotes, a number, true, false or null');
  }
  if (value !== null && typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') throw bad('the value must be a string, a number, true, false or null');
  // No stored text can hold these, and PostgreSQL refuses them in a query (a 500 before): refused here on both stores.
  if (typeof value === 'string' && (value.includes('\u0000') || LONE_SURROGATE.test(value))) throw bad('a string value cannot hold U+0000 or a lone surrogate (\ud800–\udfff)');
  if (typeof value === 'number' && !Number.isFinite(value)) throw bad('the number is out of range');
  const op = m[2] as DataCondition['op'];
  if ((op === '>' || op === '>=' || op === '<' || op === '<=') && typeof value !== 'number' && typeof value !== 'string') throw bad(`${op} compares numbers or strings`);
  return { path: (m[1] as string).slice(1).split('.'), op, value: value as DataCondition['value'] };
}
