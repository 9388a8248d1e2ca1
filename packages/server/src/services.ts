// The composition root: builds every service of the process, in dependency order, and closes
// them in the reverse order. Nothing here knows HTTP: app.ts hands these services to the route
// plugins (routes/index.ts), each of which declares the few it uses (`Pick<Services, …>`).
// The logger is built before any service, so no service closes over the app.
import type { FastifyBaseLogger } from 'fastify';
import type { JsonObject } from '@audit-ledger/core';
import { ApiKeys } from './auth/api-keys.js';
import type { AuthenticationDeps } from './auth/authenticate.js';
import { SignIn } from './auth/sign-in.js';
import { SingleSignOn } from './auth/sso.js';
import { randomUUID } from 'node:crypto';
import { BackgroundTask } from './kernel/background.js';
import { Reports } from './compliance/reports.js';
import { Compliance } from './compliance/service.js';
import { ADMIN_SOURCE, Recorder } from './ingestion/recorder.js';
import type { Config } from './kernel/config.js';
import { Entries } from './entries/service.js';
import { Exports } from './exports/service.js';
import { Forensics } from './forensics/service.js';
import { Rejections } from './hitl/rejections.js';
import { HumanReview } from './hitl/review.js';
import type { GovernanceMarks } from './governance/execution-check.js';
import { buildGovernance, type GovernanceArea } from './governance/area.js';
import { GOVERNANCE_SOURCE } from './governance/record.js';
import { Ingestion } from './ingestion/service.js';
import { Integrity } from './integrity/service.js';
import { Tlog } from './integrity/tlog.js';
import { SigningKeys } from './integrity/signing-keys.js';
import { IntegrityVerifier } from './integrity/verifier.js';
import { Appender } from './ledger/appender.js';
import { CheckpointSigner } from './ledger/checkpoints.js';
import { EntryChecker } from './ledger/entry-check.js';
import { Keyring } from './ledger/keyring.js';
import { WorkerSigner } from './ledger/signer.js';
import { Health } from './ops/health.js';
import { Metrics } from './ops/metrics.js';
import { UsageReport } from './ops/usage-report.js';
import { UsageCounter } from './ops/usage.js';
import { OtlpIngest } from './otlp/ingest.js';
import type { CounterStore } from './ratelimit/counter.js';
import { openSecretBox } from './store/secret-box.js';
import type { Store } from './store/store.js';
import { isStoreUnavailable, OutageReporter } from './store/unavailable.js';
import { UserAdmin } from './users/admin.js';
import { DeliveryWorker } from './webhooks/delivery.js';
import { StreamDelivery } from './streams/delivery.js';
import { LogStreams } from './streams/service.js';
import { WebhookEndpoints } from './webhooks/endpoints.js';
import { WebhookEventSink } from './webhooks/sink.js';
import { operatorFetch, type Resolver, systemResolver } from './egress/address-policy.js';
import { WitnessSubmitter } from './witness/submitter.js';
import { Timestamper } from './witness/timestamper.js';
import { AgentKeys } from './agents/agent-keys.js';
import { CheckpointMarks } from './continuity/marks.js';
import { ContinuityGuard, REFRESH_MS } from './continuity/guard.js';
import { Lifecycle } from './kernel/lifecycle.js';
import { IngestionLoad } from './ledger/ingestion-load.js';

/** How often the service looks for users created outside it (`users create`) to record in the trail. */
export const USERS_CREATED_OUTSIDE_MS = 5000;

/**
 * The services of the process: one per API area (route plugins take a Pick of the ones they
 * use), the ledger's own (appends, keys, background verification) and what app.ts's hooks need.
 * No repository: those are the services' dependencies, built here and handed to each.
 */
export interface Services {
  config: Config;
  /** Milliseconds since the epoch; injectable so tests can move time without sleeping. */
  clock: () => number;
  log: FastifyBaseLogger;
  /** Where database outages are reported, once each. */
  outage: OutageReporter;
  /** What the authentication hook (auth/authenticate.ts) reads credentials and counts rate limits with. */
  authentication: AuthenticationDeps;
  metrics: Metrics;
  /** Per-request usage counts (app.ts's onResponse hook). */
  usage: UsageCounter;
  // the ledger
  appender: Appender;
  keyring: Keyring;
  verifier: IntegrityVerifier;
  // one per API area
  /** Logins, sessions and who a credential is (auth/sign-in.ts). */
  signIn: SignIn;
  /** Single sign-on with OpenID Connect, when OIDC_ISSUER is set (auth/sso.ts). */
  sso: SingleSignOn | undefined;
  /** The company's integration API key (auth/api-keys.ts). */
  apiKeys: ApiKeys;
  /** User management (admins) and a user's own password, recorded in the ledger. */
  userAdmin: UserAdmin;
  /** Ingestion: client events to committed entries (ingestion/service.ts), with the governance checks made on them. */
  ingestion: Ingestion<GovernanceMarks>;
  /** OpenTelemetry (OTLP) export requests as ledger entries. */
  otlp: OtlpIngest;
  /** Reading, checking and proving stored entries (entries/service.ts). */
  entries: Entries;
  /** What the integrity endpoints answer: status, verification jobs, checkpoints and consistency proofs. */
  integrity: Integrity;
  /** The company's log as a C2SP tlog-tiles log: checkpoint, tiles, entry bundles (integrity/tlog.ts). */
  tlog: Tlog;
  /** The signing keys as published, and their online rotation (integrity/signing-keys.ts). */
  keys: SigningKeys;
  /** Agents' own signing keys and the check of their signatures (docs/ledger-format.md §20). */
  agentKeys: AgentKeys;
  /** Exports and evidence bundles (exports/service.ts). */
  exports: Exports;
  /** Replays of a trace and their analyses. */
  forensics: Forensics;
  /** Human review rejections, and the agent SDK's human-review calls over them and approvals. */
  rejections: Rejections;
  humanReview: HumanReview;
  /** Approvals bound to the exact action, standing approvals and reviewer teams (governance/approvals.ts). */
  approvals: GovernanceArea['approvals'];
  /** Reviewer teams: members, SLA, escalation target, routing (governance/teams.ts). */
  teams: GovernanceArea['teams'];
  /** The policy register: immutable versions of each policy's text. */
  policies: GovernanceArea['policies'];
  /** The decision register over decision.made entries. */
  decisions: GovernanceArea['decisions'];
  /** Incidents and their signed reports. */
  incidents: GovernanceArea['incidents'];
  /** Retention, legal holds and erasure. */
  compliance: Compliance;
  /** Signed period reports for regulators and auditors. */
  reports: Reports;
  /** Webhook endpoints, their events and delivery attempts (webhooks/endpoints.ts). */
  webhookEndpoints: WebhookEndpoints;
  /** Log streams to SIEMs, syslog and directories (streams/service.ts). */
  streams: LogStreams;
  /** The company's usage report (ops/usage-report.ts). */
  usageReport: UsageReport;
  /** The service's health checks (ops/health.ts). */
  health: Health;
}

export interface ServicesDeps {
  config: Config;
  store: Store;
  counters: CounterStore;
  log: FastifyBaseLogger;
  clock?: () => number;
  resolveHost?: Resolver;
  /** Shared with the store's connections by server.ts; made here otherwise. */
  outage?: OutageReporter;
}

/** The running services, and how to start and stop their background work. */
export interface ServiceSet {
  services: Services;
  /** Starts background work: the integrity verifier, usage flushing, webhook delivery. */
  start(): void;
  /** Finishes every queued append (so no transaction is left open), then stops signing and the rest. */
  close(): Promise<void>;
}

export async function buildServices(deps: ServicesDeps): Promise<ServiceSet> {
  const { config, store, counters, log } = deps;
  const clock = deps.clock ?? Date.now;
  const resolveHost = deps.resolveHost ?? systemResolver;
  /** Witnesses and the TSA, under the one address policy (WITNESS_ALLOW_PRIVATE lifts it). */
  const toOperator = operatorFetch(config.witnessAllowPrivate, resolveHost);
  // A database outage is one warn line (OutageReporter), not an error with a stack per failure.
  const outage = deps.outage ?? new OutageReporter({ clock, warn: (obj, msg) => log.warn(obj, msg) });
  const logError = (obj: { err?: unknown }, msg: string) => (isStoreUnavailable(obj.err) ? outage.report(obj.err) : log.error(obj, msg));

  const { accounts, ledger, signingKeys, webhookStore, integrityStore, forensicsStore, usageStore, complianceStore, witnessStore } = store;
  const ledgerOrigin = config.ledgerOrigin;

  // Every part with background work or something to close registers here as it is built; they
  // start in that order and close in the reverse (kernel/lifecycle.ts).
  const life = new Lifecycle();
  // SEARCH_INDEX: keep the index of words after each commit (rebuilt from what is stored when
  // missing), or remove it (store/search-index.ts).
  const index = store.searchIndex;
  if (index && config.searchIndex) {
    const { rebuilt } = await index.start();
    if (rebuilt) log.info({ search_index: 'building' }, 'search index: building it from the stored entries, after each commit from now on (SEARCH_INDEX=on)');
    life.add({ name: 'search index', close: () => index.close() });
  } else if (index && (await index.remove())) log.info({ search_index: 'removed' }, 'search index removed (SEARCH_INDEX=off)');
  const secretBox = openSecretBox(config);
  const keyring = await Keyring.open({ config, signingKeys, secretBox, clock });
  life.add({ name: 'keyring', close: () => keyring.close() });
  const signer = new WorkerSigner(keyring.active, config.signingWorkers);
  life.add({ name: 'signer', close: () => signer.close() });
  const metrics = new Metrics({ rateLimitFallback: () => counters.fallbackActive });
  const usage = new UsageCounter({ usageStore, clock, logError });
  life.add({ name: 'usage', start: () => usage.start(), close: () => usage.close() });
  const load = new IngestionLoad(clock);
  const checkpointSigner = new CheckpointSigner(ledgerOrigin);
  // Continuity (docs/operations.md): the newest committed checkpoints kept outside the database, and
  // the companies whose stored ledger is behind one seen outside (their appends wait for an operator).
  const marks = CheckpointMarks.inDataDir(config.dataDir, ledgerOrigin, (err) => log.error({ err }, 'writing the checkpoint marks failed: a later start cannot compare with the newest checkpoints (docs/operations.md)'));
  life.add({ name: 'checkpoint marks', close: () => marks.flush() });
  const held: { guard?: ContinuityGuard } = {};
  const appender = new Appender({
    onCheckpoint: (row) => marks.committed(row),
    refusal: (companyId) => held.guard?.refusal(companyId),
    store,
    keyring,
    signer,
    clock,
    checkpoints: checkpointSigner,
    checkpointIntervalMs: config.checkpointIntervalMs,
    onError: (err, message) => logError({ err }, message),
    onCommit: (entries, seconds, idempotencyConflicts) => {
      load.committed(seconds);
      metrics.eventsAppended.inc(entries);
      if (idempotencyConflicts > 0) metrics.idempotencyConflicts.inc(idempotencyConflicts);
      metrics.appendBatchSize.observe(entries);
      metrics.appendDuration.observe(seconds);
    },
  });
  life.add({ name: 'appender', close: () => appender.close() });
  // The sink wakes the worker after recording an event (only ever called once both exist).
  const events = new WebhookEventSink({ webhookStore, clock, onRecorded: () => delivery.kick() });
  const delivery = new DeliveryWorker({ webhookStore, secretBox, clock, timeoutMs: config.webhookTimeoutMs, allowPrivate: config.webhookAllowPrivate, metrics, events, logError, resolve: resolveHost });
  life.add({
    name: 'webhook delivery',
    start: () => {
      if (config.webhookDelivery) delivery.start();
    },
    close: () => delivery.close(),
  });
  const verifier = new IntegrityVerifier({ ledger, integrityStore, signingKeys, ledgerOrigin, intervalSeconds: config.integrityVerifyIntervalSeconds, clock, logError, events, metrics,
    scanWorkers: { count: config.verifyWorkers, store: { databaseUrl: config.databaseUrl, dataDir: config.dataDir } },
    ingesting: () => load.ingesting(),
  });
  life.add({ name: 'integrity verifier', start: () => verifier.start(), close: () => verifier.close() });
  const forensics = new Forensics({ ledger, forensicsStore, keyring, events, clock, ledgerOrigin, maxAgeDefaults: config.stalenessMaxAge });
  const entryChecker = new EntryChecker({ ledger, signingKeys, clock, ledgerOrigin, agentKeys: store.agentKeys, marks: integrityStore });
  // The one recorder of the service's own entries, and the trails of two of its sources.
  const serviceRecorder = new Recorder({ appender });
  const rejections = new Rejections({ ledger, recorder: serviceRecorder, events, clock });
  const trail = serviceRecorder.trail(ADMIN_SOURCE);
  const guard = new ContinuityGuard({ holds: store.continuityHolds, continuity: store.continuityStore, ledger, trail, marksFile: marks.file, origin: ledgerOrigin, witnesses: config.witnesses, send: toOperator, clock, warn: (obj, msg) => log.error(obj, msg) });
  held.guard = guard;
  metrics.continuityHolds = () => guard.holding;
  await guard.check();
  const continuity = new BackgroundTask(() => guard.refresh(), (err) => logError({ err }, 'continuity hold refresh failed'));
  life.add({ name: 'continuity holds', start: () => continuity.start(REFRESH_MS), close: () => continuity.close() });
  const userAdmin = new UserAdmin({ accounts, trail, clock });
  const signIn = new SignIn({ accounts, counters, trail, userAdmin, secretBox, clock, config });
  const sso = config.oidc ? new SingleSignOn({ config: config.oidc, accounts, trail, signIn, secretBox, clock, newId: randomUUID }) : undefined;
  const compliance = new Compliance({ store: complianceStore, ledger, trail, clock, subjectPaths: config.subjectFields, retentionBatch: config.retentionBatchSize, onScrubIncomplete: () => log.warn('erased content is still in the SQLite WAL: a reader held it through every checkpoint attempt; the next erasure or retention run tries again') });
  const health = new Health({ store, keyring, counters, clock });
  const webhookEndpoints = new WebhookEndpoints({ webhookStore, secretBox, trail, clock, config, resolveHost });
  const streamDelivery = new StreamDelivery({ streamStore: store.streamStore, ledger, signingKeys, witnessStore, agentKeys: store.agentKeys, secretBox, clock, metrics, events, logError, config, resolve: resolveHost, coverHead: (companyId) => appender.checkpoint(companyId), saturated: () => load.saturated() });
  life.add({
    name: 'stream delivery',
    start: () => {
      if (config.streamDelivery) streamDelivery.start();
    },
    close: () => streamDelivery.close(),
  });
  const streams = new LogStreams({ streamStore: store.streamStore, ledger, secretBox, trail, clock, config, resolveHost, kick: () => streamDelivery.kick() });
  metrics.streamLag = async () => Promise.all((await store.streamStore.all()).map(async (row) => ({ company_id: row.company_id, stream_id: row.stream_id, status: row.status, ...(await streams.lag(row)) })));
  const usageReport = new UsageReport({ usage, usageStore, accounts, ledger, reportStore: store.reportStore, clock });
  const keys = new SigningKeys({ signingKeys, keyring, accounts, trail, config, log });
  const apiKeys = new ApiKeys({ accounts, trail, events, clock });
  const governance = buildGovernance(
    {
      store: store.governanceStore,
      ledger,
      accounts,
      recorder: serviceRecorder.trail(GOVERNANCE_SOURCE),
      events,
      clock,
      logError,
      keyring,
      transitions: () => signingKeys.transitions(),
      checkEntry: async (companyId, logId) => (await entryChecker.check(companyId, logId)) as unknown as JsonObject | undefined,
      replayCause: (companyId, sessionId) => forensics.causeOfSession(companyId, sessionId),
      traceCause: (companyId, traceId) => forensics.causeOfTrace(companyId, traceId),
    },
    life,
  );
  const { policies, approvals, teams, binding, decisions, incidents } = governance;
  const agentKeys = new AgentKeys({ store: store.agentKeys, trail, clock, verifyMany: (items) => signer.verifyMany(items) });
  const ingestion = new Ingestion<GovernanceMarks>({ appender, usage, config, checks: binding, agentKeys });
  const otlp = new OtlpIngest({ ingestion, config });
  const entries = new Entries({ ledger, entryChecker, config, governance: store.governanceStore, ...(store.searchIndex ? { searchIndex: store.searchIndex } : {}) });
  const exports = new Exports({ ledger, signingKeys, witnessStore, agentKeys: store.agentKeys, trail, clock, config });
  const integrity = new Integrity({ verifier, compliance, trail, ledger, integrityStore, witnessStore, config, log });
  const tlog = new Tlog({ ledger, witnessStore, accounts, trail });
  const reports = new Reports({ reportStore: store.reportStore, ledger, signingKeys, witnessStore, forensicsStore, accounts, keyring, verifier, compliance, trail, clock, governance: store.governanceStore });
  const witnesses = new WitnessSubmitter({ witnesses: config.witnesses, send: toOperator, witnessStore, ledger, accounts, metrics, clock, signingKeys, warn: (obj, msg) => log.warn(obj, msg) });
  const witnessing = new BackgroundTask(
    () => witnesses.pass(),
    (err) => logError({ err }, 'witness submission failed'),
  );
  life.add({
    name: 'witnesses',
    start: () => {
      if (!witnesses.enabled) return;
      witnessing.start(Math.max(200, config.checkpointIntervalMs));
      witnessing.kick();
    },
    close: () => witnessing.close(),
  });
  const timestamper = new Timestamper({ tsaUrl: config.tsaUrl, send: toOperator, witnessStore, ledger, accounts, clock, warn: (obj, msg) => log.warn(obj, msg), onToken: (companyId, treeSize, token) => checkpointSigner.timestamped(companyId, treeSize, token) });
  const timestamping = new BackgroundTask(
    () => timestamper.pass(),
    (err) => logError({ err }, 'RFC 3161 timestamping failed'),
  );
  life.add({
    name: 'timestamps',
    start: () => {
      if (!timestamper.enabled) return;
      timestamping.start(config.tsaIntervalSeconds * 1000);
      timestamping.kick();
    },
    close: () => timestamping.close(),
  });
  const retention = new BackgroundTask(
    async () => {
      await compliance.runRetention();
    },
    (err) => logError({ err }, 'retention run failed'),
  );
  life.add({
    name: 'retention',
    start: () => {
      if (config.retentionIntervalSeconds <= 0) return;
      retention.start(config.retentionIntervalSeconds * 1000);
      retention.kick(); // at start too: finishes erasures a crash interrupted
    },
    close: async () => {
      compliance.close();
      await retention.close();
    },
  });
  // Users created outside the service (`users create`, bootstrap) get their trail entry here.
  const usersCreatedOutside = new BackgroundTask(
    async () => {
      const n = await userAdmin.recordCreatedOutside();
      if (n > 0) log.info({ users: n }, 'administrators trail: recorded users created outside the service');
    },
    (err) => logError({ err }, 'recording users created outside the service failed'),
  );
  life.add({
    name: 'users created outside',
    start: () => {
      usersCreatedOutside.start(USERS_CREATED_OUTSIDE_MS);
      usersCreatedOutside.kick();
    },
    close: () => usersCreatedOutside.close(),
  });

  return {
    services: {
      config,
      clock,
      log,
      outage,
      authentication: { accounts, counters, clock, csrfToken: (tokenHash) => signIn.csrfToken(tokenHash), sessionIdleTimeoutSeconds: config.sessionIdleTimeoutSeconds },
      metrics,
      usage,
      appender,
      keyring,
      verifier,
      signIn,
      sso,
      apiKeys,
      userAdmin,
      ingestion,
      otlp,
      entries,
      integrity,
      tlog,
      keys,
      agentKeys,
      exports,
      forensics,
      rejections,
      humanReview: new HumanReview({ rejections, approvals, teams }),
      approvals,
      teams,
      policies,
      decisions,
      incidents,
      compliance,
      reports,
      webhookEndpoints,
      streams,
      usageReport,
      health,
    },
    start: () => life.start(),
    close: () => life.close(),
  };
}
