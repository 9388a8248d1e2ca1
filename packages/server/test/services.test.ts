// The services behind thin handlers, tested without HTTP: the entry check behind
// GET /logs/{id}/verify and the human review rejection behind POST /hitl/reject, built by the
// composition root (services.ts) over a real store, and the one mapping of domain errors to
// problems. Both stores.
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../src/users/accounts.js';
import { InvalidLoginError, LoginLockedError } from '../src/auth/sign-in.js';
import { domainProblem } from '../src/http/domain-problems.js';
import { NotFoundError, TreeSizeOutOfRangeError } from '../src/kernel/domain-error.js';
import { SelectionError } from '../src/exports/service.js';
import { TraceNotFoundError } from '../src/forensics/service.js';
import { HITL_SOURCE } from '../src/hitl/rejections.js';
import { AppenderClosedError, IdempotencyConflictError } from '../src/ledger/appender/errors.js';
import { prepareEvent } from '../src/ingestion/input.js';
import type { PreparedEvent } from '../src/ledger/appender/types.js';
import { MemoryCounterStore } from '../src/ratelimit/counter.js';
import { buildServices, type ServiceSet } from '../src/services.js';
import { ActiveKeyExistsError } from '../src/store/accounts.js';
import { JobOpenError, type JobRow } from '../src/store/integrity.js';
import { RotationConflictError } from '../src/store/keys.js';
import type { Store } from '../src/store/store.js';
import { STORE_KINDS } from './helpers/env.js';
import { FakeClock, testConfig } from './helpers/app.js';
import { createTestStore } from './helpers/stores.js';

const event = (e: Record<string, unknown>) => prepareEvent(e as never, '/body') as PreparedEvent;

describe.each(STORE_KINDS)('services without HTTP on %s', (kind) => {
  let set: ServiceSet;
  let store: Store;
  let dispose: () => Promise<void>;
  let companyId: string;
  const clock = new FakeClock();

  beforeAll(async () => {
    const made = await createTestStore(kind);
    dispose = made.dispose;
    store = made.store;
    const config = testConfig(made.db, { CHECKPOINT_INTERVAL_MS: '0' });
    set = await buildServices({ config, store: made.store, counters: new MemoryCounterStore(clock.now), log: pino({ level: 'silent' }) as FastifyBaseLogger, clock: clock.now });
    ({ company: { company_id: companyId } } = await createUser(made.store, { company: `svc-${kind}`, email: `svc-${kind}-${Date.now()}@example.com`, password: 'a long enough password' }, clock.now, null));
  });
  afterAll(async () => {
    await set?.close();
    await dispose?.();
  });

  it('checks an entry: chain, signature and inclusion under the latest checkpoint, and nothing for an unknown id', async () => {
    const { appender, entries } = set.services;
    const [a, b] = await appender.append(companyId, [event({ event_type: 'tool.called', data: { n: 1 } }), event({ event_type: 'tool.called', data: { n: 2 } })]);
    const first = await entries.check(companyId, (a as { log_id: string }).log_id);
    expect(first).toMatchObject({ seq: a?.seq, hash: a?.hash, chain_valid: true, signature_valid: true, problems: [], merkle_included: true, verified_at: new Date(clock.ms).toISOString() });
    expect(first?.checkpoint?.tree_size).toBeGreaterThanOrEqual(2);
    expect((await entries.check(companyId, (b as { log_id: string }).log_id)).chain_valid).toBe(true);
    await expect(entries.check(companyId, '00000000-0000-4000-8000-000000000000')).rejects.toBeInstanceOf(NotFoundError);
    // Another company's entry is not this company's.
    await expect(entries.check('00000000-0000-4000-8000-000000000001', (a as { log_id: string }).log_id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('records a rejection in the decision’s trace, reads it back, and emits it', async () => {
    const { appender, rejections, webhookEndpoints } = set.services;
    const { ledger } = store;
    const traceId = '0190a000-0000-7000-8000-00000000000a';
    const decisionId = '0190a000-0000-7000-8000-00000000000d';
    await appender.append(companyId, [event({ event_type: 'decision.made', trace_id: traceId, data: { decision_id: decisionId } })]);
    const view = await rejections.reject(companyId, { kind: 'user', id: 'u-1' }, { reviewer: 'ana', rejection_reason: 'wrong account', decision_id: decisionId });
    expect(view).toMatchObject({ reviewer: 'ana', rejection_reason: 'wrong account', decision_id: decisionId, trace_id: traceId, submitted_by: { kind: 'user', id: 'u-1' } });
    const stored = await ledger.getEntry(companyId, view.log_id);
    expect(stored).toMatchObject({ event_type: 'hitl.rejected', source: HITL_SOURCE, trace_id: traceId });
    expect(JSON.parse(stored?.data ?? '{}')).toEqual({ rejection_id: view.id, reviewer: 'ana', rejection_reason: 'wrong account', decision_id: decisionId, submitted_by: { kind: 'user', id: 'u-1' } });
    const listed = await rejections.list(companyId, { decision_id: decisionId, limit: 10 });
    expect(listed.items).toEqual([view]);
    const events = await webhookEndpoints.events(companyId, { type: 'hitl.rejected', limit: 10 });
    expect(JSON.stringify(events)).toContain(view.id);
  });

  it('signs in without HTTP: a token for the right password, InvalidLoginError otherwise, and after 10 failures LoginLockedError with one trail entry', async () => {
    const { signIn } = set.services;
    const { ledger } = store;
    const email = `lock-${kind}-${Date.now()}@example.com`;
    await createUser(store, { company: `svc-${kind}`, email, password: 'the right password here' }, clock.now, null);
    const ok = await signIn.login(email.toUpperCase(), 'the right password here');
    expect(ok).toMatchObject({ ttlSeconds: expect.any(Number), passwordChangeRequired: false });
    expect(ok.token).toMatch(/^alt_/);
    for (let i = 0; i < 10; i++) await expect(signIn.login(email, 'wrong')).rejects.toBeInstanceOf(InvalidLoginError);
    const locked = await signIn.login(email, 'the right password here').catch((e: unknown) => e);
    expect(locked).toBeInstanceOf(LoginLockedError);
    expect((locked as LoginLockedError).data.retryAfterSeconds).toBeGreaterThan(0);
    expect(domainProblem(locked as LoginLockedError)).toMatchObject({ status: 429, code: 'too_many_login_attempts', extra: { headers: { 'Retry-After': String((locked as LoginLockedError).data.retryAfterSeconds) } } });
    await expect(signIn.login(email, 'the right password here')).rejects.toBeInstanceOf(LoginLockedError);
    const trail = await ledger.listEntries(companyId, { event_type: 'auth.login_locked', limit: 10, order: 'asc' });
    expect(trail.filter((e) => e.data?.includes(email))).toHaveLength(1);
    clock.advance(61_000);
    expect((await signIn.login(email, 'the right password here')).token).toMatch(/^alt_/);
  });

  it('answers the integrity questions without HTTP: proofs only up to the latest checkpoint, checkpoints by size, unknown jobs not found', async () => {
    const { appender, integrity } = set.services;
    // CHECKPOINT_INTERVAL_MS=0: every append is checkpointed.
    await appender.append(companyId, [event({ event_type: 'tool.called', data: { n: 'integrity' } }), event({ event_type: 'tool.called', data: { n: 'integrity 2' } })]);
    const signed = await integrity.signedSize(companyId);
    expect(signed).toBeGreaterThan(1);
    const proof = await integrity.consistency(companyId, 1, signed);
    expect(proof).toMatchObject({ first: 1, second: signed, second_checkpoint: { tree_size: signed } });
    const beyond = await integrity.consistency(companyId, 1, signed + 1).catch((e: unknown) => e);
    expect(beyond).toBeInstanceOf(TreeSizeOutOfRangeError);
    expect(domainProblem(beyond as TreeSizeOutOfRangeError)).toMatchObject({ status: 400, code: 'tree_size_out_of_range', extra: { errors: [{ field: '/querystring/second', message: `must be at most ${signed}` }] } });
    await expect(integrity.consistency(companyId, 2, 1)).rejects.toBeInstanceOf(TreeSizeOutOfRangeError);
    expect((await integrity.checkpoint(companyId, signed)).tree_size).toBe(signed);
    await expect(integrity.checkpoint(companyId, signed + 1000)).rejects.toBeInstanceOf(NotFoundError);
    await expect(integrity.job(companyId, '00000000-0000-4000-8000-000000000000')).rejects.toBeInstanceOf(NotFoundError);
    const status = await integrity.status(companyId);
    expect(status.witnesses).toEqual({ quorum: 0, latest_checkpoint_cosigned_by: [], quorum_met: true, items: [] });
  });

  it('bundles evidence without HTTP: one kind of selection, bounded ranges, not found, and one trail entry per bundle', async () => {
    const { appender, exports } = set.services;
    const { ledger } = store;
    const traceId = '0190a000-0000-7000-8000-0000000000e1';
    await appender.append(companyId, [event({ event_type: 'tool.called', trace_id: traceId, data: { n: 1 } }), event({ event_type: 'tool.called', trace_id: traceId, data: { n: 2 } })]);
    const actor = { kind: 'service', task: 'test' } as const;
    const bundle = await exports.evidence(companyId, { trace_id: traceId }, actor);
    expect(bundle).toMatchObject({ format: 'audit-ledger/evidence-bundle/v1', selection: { trace_id: traceId } });
    expect(bundle.entries).toHaveLength(2);
    for (const [q, field] of [[{}, '/querystring'], [{ trace_id: traceId, from_seq: 0, to_seq: 1 }, '/querystring'], [{ from_seq: 0 }, '/querystring'], [{ from_seq: 5, to_seq: 4 }, '/querystring/to_seq'], [{ from_seq: 0, to_seq: 1_000_000 }, '/querystring/to_seq']] as const) {
      const err = await exports.evidence(companyId, q, actor).catch((e: unknown) => e);
      expect(err, JSON.stringify(q)).toBeInstanceOf(SelectionError);
      expect(domainProblem(err as SelectionError)).toMatchObject({ status: 400, code: 'validation_failed', extra: { errors: [{ field }] } });
    }
    await expect(exports.evidence(companyId, { trace_id: '0190a000-0000-7000-8000-0000000000e2' }, actor)).rejects.toBeInstanceOf(NotFoundError);
    const recorded = await ledger.listEntries(companyId, { event_type: 'evidence.generated', limit: 10, order: 'asc' });
    expect(recorded.filter((e) => e.data?.includes(traceId))).toHaveLength(1);
  });

  it('a rejection with no matching decision has no trace; a closed appender refuses it and stores nothing', async () => {
    const { rejections } = set.services;
    const lone = await rejections.reject(companyId, { kind: 'api_key', id: 'k-1' }, { reviewer: 'bo', rejection_reason: 'no', decision_id: '0190a000-0000-7000-8000-0000000000ff' });
    expect(lone.trace_id).toBeNull();
    const before = (await rejections.list(companyId, { limit: 1000 })).items.length;
    await set.services.appender.close();
    await expect(rejections.reject(companyId, { kind: 'user', id: 'u-1' }, { reviewer: 'ana', rejection_reason: 'late' })).rejects.toBeInstanceOf(AppenderClosedError);
    expect((await rejections.list(companyId, { limit: 1000 })).items.length).toBe(before);
  });
});

describe('domain errors as problems', () => {
  const job = { job_id: 'j-1', status: 'running' } as JobRow;
  it('maps each domain error to one problem, with its status, code and the data the client needs', () => {
    expect(domainProblem(new JobOpenError(job))).toMatchObject({ status: 409, code: 'verification_running', extra: { headers: { location: '/api/v1/integrity/jobs/j-1' } } });
    expect(domainProblem(new RotationConflictError('k'))).toMatchObject({ status: 409, code: 'rotation_conflict' });
    expect(domainProblem(new ActiveKeyExistsError('c'))).toMatchObject({ status: 409, code: 'active_key_exists' });
    expect(domainProblem(new TraceNotFoundError('t'))).toMatchObject({ status: 404, code: 'not_found', message: 'No events with trace_id t' });
    expect(domainProblem(new AppenderClosedError())).toMatchObject({ status: 503, code: 'service_unavailable', extra: { headers: { 'Retry-After': '1' } } });
    expect(domainProblem(new IdempotencyConflictError(3, 'k'), (i) => `/body/logs/${i}`)).toMatchObject({
      status: 422,
      code: 'idempotency_key_reused',
      extra: { errors: [{ field: '/body/logs/3/idempotency_key', message: 'already used for a different event' }] },
    });
  });
  it('names each error by its class and carries a stable code and data', () => {
    const e = new JobOpenError(job);
    expect([e.name, e.code, e.data.job.job_id]).toEqual(['JobOpenError', 'verification_running', 'j-1']);
  });
});
