// The SDK's API types, generated at build time (scripts/build.mjs) from the committed contract,
// docs/openapi.json, by openapi-typescript: packages/sdk/src/api-types.ts is a build output, not in
// git. The document's recorded examples are left out: they are for readers of the document, and in
// the types' comments they were 94 % of the SDK's tarball. `node scripts/api-types.mjs` writes it;
// `--check` exits 1 when the file on disk is not what the document gives.
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
export const DOCUMENT = path.join(root, 'docs', 'openapi.json');
export const OUTPUT = path.join(root, 'packages', 'sdk', 'src', 'api-types.ts');

/** The document without `example`/`examples` (a schema property of either name is kept). */
function withoutExamples(value, parentKey) {
  if (Array.isArray(value)) return value.map((v) => withoutExamples(v));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => parentKey === 'properties' || (k !== 'example' && k !== 'examples'))
      .map(([k, v]) => [k, withoutExamples(v, k)]),
  );
}

export async function apiTypes() {
  // Loaded only when the types are made: `npm start` with a current build does not pay for it.
  const { default: openapiTS, astToString } = await import('openapi-typescript');
  const doc = withoutExamples(JSON.parse(fs.readFileSync(DOCUMENT, 'utf8')));
  const body = astToString(await openapiTS(doc));
  return `// Generated from docs/openapi.json by scripts/api-types.mjs (run by the build): do not edit, not in git.\n${body}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const text = await apiTypes();
  if (process.argv.includes('--check')) {
    const current = fs.existsSync(OUTPUT) ? fs.readFileSync(OUTPUT, 'utf8') : '';
    if (current !== text) {
      console.error(`${path.relative(root, OUTPUT)} is not what docs/openapi.json gives: run npm run build`);
      process.exit(1);
    }
  } else if (!fs.existsSync(OUTPUT) || fs.readFileSync(OUTPUT, 'utf8') !== text) {
    fs.writeFileSync(OUTPUT, text);
  }
}
