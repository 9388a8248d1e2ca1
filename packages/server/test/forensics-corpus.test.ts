// The labelled forensics corpus through the API, on both stores: every trace gets the labelled
// root cause (NONE, with detected false, for clean ones), cites the evidence its label names,
// and the answers are calibrated (every correct answer more confident than any wrong one).
// `npm run forensics:eval` prints the full scores; docs/forensics.md explains the corpus.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS } from './helpers/env.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { type Answer, loadCorpus, report, run, score } from './forensics-corpus/corpus.js';

const corpus = loadCorpus();

describe.each(STORE_KINDS)('the labelled forensics corpus on %s', (kind) => {
  let t: TestApp;
  let key: string;
  let companyId: string;
  const answers: Answer[] = [];
  beforeAll(async () => {
    t = await startTestApp(kind);
    const acct = await t.newAccount();
    companyId = acct.companyId;
    key = (await t.createKey(acct.token, 1_000_000)).key;
  });
  afterAll(() => t.close());

  it('holds at least 40 traces, each labelled with its evidence and a sentence of reasoning', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(40);
    for (const c of corpus) {
      expect(c.reasoning.length, c.file).toBeGreaterThan(20);
      if (c.label.root_cause_type !== 'NONE') expect(c.label.evidence.length, c.file).toBeGreaterThan(0);
    }
  });

  it.each(corpus.map((c) => [c.file, c] as const))('%s', async (_file, trace) => {
    const a = await run(t, key, companyId, trace);
    answers.push(a);
    expect({ type: a.predicted, detected: a.detected }, a.description).toEqual({ type: trace.label.root_cause_type, detected: trace.label.root_cause_type !== 'NONE' });
    expect(a.missing, `evidence not cited: ${a.description}`).toEqual([]);
    expect(a.description).not.toMatch(/\.\.(?!\.)/);
  });

  it('scores: all correct, evidence recall ≥ 0.9, no false positive on a clean trace, confidence separates right from wrong', () => {
    expect(answers).toHaveLength(corpus.length);
    const s = score(answers);
    expect(s.falsePositives, report(s, answers)).toEqual([]);
    expect(s.evidenceRecall).toBeGreaterThanOrEqual(0.9);
    expect(s.correct, report(s, answers)).toBe(corpus.length);
    expect(s.separated).toBe(true);
  });
});
