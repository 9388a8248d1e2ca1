// The company's log as a C2SP tlog-tiles log (docs/transparency.md, docs/ledger-format.md §18),
// without HTTP: the checkpoint (the latest signed note with its witnesses' cosignatures), the
// Merkle tiles and entry bundles a tree of the latest checkpoint's size has, the entries'
// canonical bytes, and whether the company published the hashes (public read, never content).
// routes/tlog.ts parses the path, calls one method and sets the spec's headers.
import { canonicalRecordText, encodeEntryBundle, entryLeafHash, fromHex, TILE_WIDTH, tileHashIndexes, type TileRef, tileSeqs, tileWidthAt, utf8 } from '@audit-ledger/core';
import { CoreError } from '@audit-ledger/core';
import type { AdminTrail, TrailActor } from '../ingestion/recorder.js';
import { NotFoundError } from '../kernel/domain-error.js';
import type { AccountStore } from '../store/accounts.js';
import type { LedgerStore } from '../store/ledger.js';
import type { WitnessStore } from '../store/witnesses.js';
import { cosignedCheckpointView } from '../ledger/proofs.js';

export interface TlogDeps {
  ledger: LedgerStore;
  witnessStore: WitnessStore;
  accounts: Pick<AccountStore, 'tlogPublic' | 'setTlogPublic'>;
  trail: Pick<AdminTrail, 'record'>;
}

/** Entries read per query while the canonical bodies are written out (a bundle holds up to 256). */
const BODY_CHUNK = 32;

export class Tlog {
  constructor(private readonly deps: TlogDeps) {}

  /** The tree size tiles are served for: the latest checkpoint's (0 before the first). */
  private async size(companyId: string): Promise<number> {
    return (await this.deps.ledger.latestCheckpoint(companyId))?.tree_size ?? 0;
  }

  /** The latest checkpoint as a signed note, the witnesses' cosignatures appended as further signature lines. */
  async checkpoint(companyId: string): Promise<string> {
    const row = await this.deps.ledger.latestCheckpoint(companyId);
    if (!row) throw new NotFoundError('No checkpoint yet: the ledger has no entries');
    return cosignedCheckpointView(row, await this.deps.witnessStore.cosignatures(companyId, row.tree_size)).cosigned_note;
  }

  /** The tile's width must fit the latest checkpoint's tree: a full tile once complete, a partial one of any width up to what the tree has. */
  private async check(companyId: string, t: TileRef): Promise<void> {
    const size = await this.size(companyId);
    const has = tileWidthAt(t.level, t.index, size);
    if (t.width > has)
      throw new NotFoundError(
        has === 0
          ? `The tree of the latest checkpoint (size ${size}) has no tile ${t.level}/${t.index}`
          : `The tree of the latest checkpoint (size ${size}) has ${has === TILE_WIDTH ? 'the full' : `a partial (width ${has})`} tile ${t.level}/${t.index}, not one of width ${t.width}`,
      );
  }

  /** A Merkle tile: its hashes' 32 raw bytes each, left to right. */
  async tile(companyId: string, t: TileRef & { level: number }): Promise<Uint8Array> {
    await this.check(companyId, t);
    const out = new Uint8Array(t.width * 32);
    if (t.level === 0) {
      const seqs = tileSeqs(t.index, t.width);
      const hashes = await this.deps.ledger.readEntryHashes(companyId, seqs);
      seqs.forEach((seq, i) => out.set(entryLeafHash(this.present(hashes.get(seq), seq)), i * 32));
      return out;
    }
    const indexes = tileHashIndexes(t.level, t.index, t.width);
    const hashes = await this.deps.ledger.readTreeHashes(companyId, indexes);
    indexes.forEach((idx, i) => {
      const hex = hashes.get(idx);
      if (hex === undefined) throw new CoreError('missing_tree_hash', `stored tree hash ${idx} is missing`, idx);
      out.set(fromHex(hex), i * 32);
    });
    return out;
  }

  /** An entry bundle as the spec defines it: each leaf's data, which is the 32 raw bytes of the entry hash (§7), uint16 length-prefixed. */
  async entryBundle(companyId: string, t: TileRef): Promise<Uint8Array> {
    await this.check(companyId, t);
    const seqs = tileSeqs(t.index, t.width);
    const hashes = await this.deps.ledger.readEntryHashes(companyId, seqs);
    return encodeEntryBundle(seqs.map((seq) => fromHex(this.present(hashes.get(seq), seq))));
  }

  /** The entries' canonical bytes (what each entry hash covers), one per line, read a few at a time. */
  async *entryBodies(companyId: string, t: TileRef): AsyncGenerator<Uint8Array> {
    await this.check(companyId, t);
    const seqs = tileSeqs(t.index, t.width);
    for (let i = 0; i < seqs.length; i += BODY_CHUNK) {
      const chunk = seqs.slice(i, i + BODY_CHUNK);
      const rows = new Map((await this.deps.ledger.getEntriesBySeq(companyId, chunk)).map((r) => [r.seq, r]));
      yield utf8(chunk.map((seq) => `${canonicalRecordText(this.present(rows.get(seq), seq))}\n`).join(''));
    }
  }

  private present<T>(v: T | undefined, seq: number): T {
    if (v === undefined) throw new CoreError('missing_tree_hash', `entry ${seq}, under a signed checkpoint, is missing`);
    return v;
  }

  async isPublic(companyId: string): Promise<boolean> {
    return this.deps.accounts.tlogPublic(companyId);
  }

  /** Publishes the hashes (checkpoint, tiles, entry bundles) without a credential, or stops; a change is a trail entry. */
  async setPublic(companyId: string, isPublic: boolean, actor: TrailActor): Promise<boolean> {
    if ((await this.isPublic(companyId)) === isPublic) return isPublic;
    await this.deps.trail.record(companyId, isPublic ? 'tlog.published' : 'tlog.unpublished', actor, {});
    await this.deps.accounts.setTlogPublic(companyId, isPublic);
    return isPublic;
  }

  /** Public read: 404 unless the company published its log (the same answer as for a company that does not exist). */
  async requirePublic(companyId: string): Promise<void> {
    if (!(await this.isPublic(companyId))) throw new NotFoundError('No public log here');
  }
}
