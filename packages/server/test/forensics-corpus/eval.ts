// `npm run forensics:eval [-- sqlite|postgres] [--answers]`: sends every trace of the labelled corpus through the
// API of a fresh service (SQLite by default) and prints the confusion matrix, per-type precision
// and recall, evidence recall, false positives on clean traces, the reliability table and the
// Brier score. docs/forensics.md quotes its latest output.
import { startTestApp } from '../helpers/app.js';
import type { StoreKind } from '../helpers/env.js';
import { type Answer, loadCorpus, report, run, score } from './corpus.js';

const kind = (process.argv.slice(2).find((a) => !a.startsWith('--')) ?? 'sqlite') as StoreKind;
if (kind !== 'sqlite' && kind !== 'postgres') throw new Error(`usage: npm run forensics:eval [sqlite|postgres] (got ${kind})`);
const t = await startTestApp(kind);
try {
  const acct = await t.newAccount();
  const { key } = await t.createKey(acct.token, 1_000_000);
  const corpus = loadCorpus();
  const answers: Answer[] = [];
  for (const trace of corpus) answers.push(await run(t, key, acct.companyId, trace));
  console.log(`forensics corpus on ${kind}: ${corpus.length} traces (packages/server/test/forensics-corpus/)\n`);
  console.log(report(score(answers), answers));
  if (process.argv.includes('--answers')) for (const a of answers) console.log(`\n${a.file}: ${a.predicted} (${a.confidence})\n  ${a.description}`);
} finally {
  await t.close();
}
