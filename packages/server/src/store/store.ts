// The store: one database handle and the repositories over it. Both backends are this class
// over a different Kysely dialect (see sqlite.ts and postgres.ts); the same behavioural suite
// runs on both. Each repository is its own file; services and routes are handed the ones they
// use (services.ts), never the Store.
import { type Kysely, sql } from 'kysely';
import type { ChainWriter, WithChain } from './chain.js';
import { AccountStore } from './accounts.js';
import { ComplianceStore } from './compliance.js';
import { WitnessStore } from './witnesses.js';
import { ReportStore } from './reports.js';
import { ForensicsStore } from './forensics.js';
import { GovernanceStore } from './governance.js';
import type { SearchIndex } from './search-index.js';
import { distributeSchema } from './citus.js';
import type { DbHandle, StoreKind } from './handle.js';
import { IntegrityStore } from './integrity.js';
import { KeyStore } from './keys.js';
import { LedgerStore } from './ledger.js';
import { LATEST_MIGRATION } from './migrations.js';
import { currentMigration, migrateToLatest, type MigrationPlan, migrationPlan } from './migrate.js';
import type { Database } from './schema.js';
import { UsageStore } from './usage.js';
import { StreamStore } from './streams.js';
import { WebhookStore } from './webhooks.js';
import { AgentKeyStore } from './agent-keys.js';
import { ContinuityHolds, ContinuityStore } from './continuity.js';

export type { StoreKind } from './handle.js';
export type { AccessTokenGrant, ApiKey, Company, NewApiKey, User } from './accounts.js';
export { ActiveKeyExistsError, EmailTakenError, KEY_CACHE_MS } from './accounts.js';
export type { EntryFilter } from './ledger.js';
export type { SigningKeyRow } from './keys.js';

export interface MigrationState {
  current: string | null;
  latest: string;
}

export interface StoreOptions {
  kind: StoreKind;
  db: Kysely<Database>;
  /** Recognizes a unique-constraint violation and returns the violated index's name. */
  uniqueViolation: (err: unknown) => string | undefined;
  /** The locked append transaction for one company's chain (dialect-specific). */
  withChain: WithChain;
  /** When the backend has one: appends committed off the request thread (see ChainWriter). */
  chainWriter?: ChainWriter;
  /** The index of words inside events, kept after the commit (search-index.ts); none for an in-memory SQLite store. */
  searchIndex?: SearchIndex;
  /** When the backend has one (SQLite): searches run off the request thread (sqlite-reader.ts). */
  searchReader?: { query(sql: string, parameters: readonly unknown[]): Promise<unknown[]>; close(): Promise<void> };
  /** Milliseconds since the epoch; Date.now unless a test moves time. */
  clock?: () => number;
  /** PostgreSQL (LEDGER_STORE): `auto` distributes on a Citus coordinator, `citus` insists on one, `postgres` never distributes. */
  citus?: 'auto' | 'postgres' | 'citus';
  /** Whether this store runs in Citus mode (asked of the database once; LEDGER_STORE=postgres: never). */
  onCitus?: () => Promise<boolean>;
}

/** LEDGER_STORE=citus on a database without the Citus extension. */
export class CitusMissingError extends Error {
  constructor() {
    super('LEDGER_STORE=citus, but DATABASE_URL is not a Citus coordinator (no citus extension): CREATE EXTENSION citus there and add the workers (docs/scaling.md), or set LEDGER_STORE=auto');
  }
}

export class Store implements DbHandle {
  readonly kind: StoreKind;
  readonly db: Kysely<Database>;
  readonly uniqueViolation: (err: unknown) => string | undefined;
  readonly withChain: WithChain;
  readonly chainWriter?: ChainWriter;
  readonly searchOffThread?: (sql: string, parameters: readonly unknown[]) => Promise<unknown[]>;
  private readonly searchReader?: StoreOptions['searchReader'];
  private readonly citusMode: NonNullable<StoreOptions['citus']>;
  /** Whether this store runs in Citus mode: the schema distributed on a Citus coordinator (store/citus.ts). */
  readonly onCitus: () => Promise<boolean>;
  /** What the last migrate distributed on Citus (tables it made distributed or reference tables; empty when all already were). */
  lastDistribution: { distributed: string[]; reference: string[] } = { distributed: [], reference: [] };
  /** The index of words inside events (search-index.ts), when this store can keep one. */
  readonly searchIndex?: SearchIndex;

  readonly accounts: AccountStore;
  readonly ledger: LedgerStore;
  /** The service's signing keys and their transitions (service-wide). */
  readonly signingKeys: KeyStore;
  readonly webhookStore: WebhookStore;
  readonly integrityStore: IntegrityStore;
  readonly forensicsStore: ForensicsStore;
  readonly usageStore: UsageStore;
  readonly complianceStore: ComplianceStore;
  readonly witnessStore: WitnessStore;
  readonly reportStore: ReportStore;
  readonly governanceStore: GovernanceStore;
  readonly streamStore: StreamStore;
  readonly agentKeys: AgentKeyStore;
  /** Backups and restores (continuity/). */
  readonly continuityStore: ContinuityStore;
  readonly continuityHolds: ContinuityHolds;

  constructor(opts: StoreOptions) {
    this.kind = opts.kind;
    this.db = opts.db;
    this.uniqueViolation = opts.uniqueViolation;
    this.withChain = opts.withChain;
    this.citusMode = opts.citus ?? 'auto';
    this.onCitus = opts.onCitus ?? (() => Promise.resolve(false));
    if (opts.chainWriter) this.chainWriter = opts.chainWriter;
    if (opts.searchIndex) this.searchIndex = opts.searchIndex;
    if (opts.searchReader) {
      const reader = opts.searchReader;
      this.searchReader = reader;
      this.searchOffThread = (text, parameters) => reader.query(text, parameters);
    }
    this.accounts = new AccountStore({ handle: this, clock: opts.clock ?? Date.now });
    this.ledger = new LedgerStore(this);
    this.signingKeys = new KeyStore(this);
    this.webhookStore = new WebhookStore(this);
    this.integrityStore = new IntegrityStore(this, this.ledger);
    this.forensicsStore = new ForensicsStore(this);
    this.usageStore = new UsageStore(this);
    this.complianceStore = new ComplianceStore(this);
    this.witnessStore = new WitnessStore(this);
    this.reportStore = new ReportStore(this);
    this.governanceStore = new GovernanceStore(this);
    this.streamStore = new StreamStore(this);
    this.agentKeys = new AgentKeyStore(this);
    this.continuityStore = new ContinuityStore(this);
    this.continuityHolds = new ContinuityHolds(this);
  }

  async migrate(): Promise<string[]> {
    const citus = await this.onCitus();
    if (this.citusMode === 'citus' && !citus) throw new CitusMissingError();
    const applied = await migrateToLatest(this.db as Kysely<unknown>);
    // On a Citus coordinator, the tables the migrations made are distributed by company (store/citus.ts).
    if (citus) this.lastDistribution = await distributeSchema(this.db as Kysely<unknown>);
    return applied;
  }

  /** What `migrate` would do, changing nothing (`migrate --dry-run`). */
  async migrationPlan(): Promise<MigrationPlan> {
    return migrationPlan(this.db as Kysely<unknown>);
  }

  async migrationState(): Promise<MigrationState> {
    return { current: await currentMigration(this.db as Kysely<unknown>), latest: LATEST_MIGRATION };
  }

  async close(): Promise<void> {
    await this.chainWriter?.close();
    await this.searchIndex?.close();
    await this.searchReader?.close();
    await this.db.destroy();
  }

  /** One round trip to the database; rejects when it does not answer. */
  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }
}
