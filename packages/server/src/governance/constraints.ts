// The argument constraints of standing approvals (docs/governance.md, "Standing approvals"): a
// JSON Schema an admin writes and every later execution's arguments are tested against. Both the
// schema and the arguments come from outside, so:
// - Each schema is compiled in a scope of its own (a fresh Ajv instance per company and schema
//   text): one company can neither `$ref` another's `$id` nor block it from using the same id, and
//   the verdict on an execution never depends on which schemas happen to be loaded in the process
//   (before, one shared instance held every company's schemas, so a restart could change a check).
// - `pattern` and `patternProperties` run on RE2 (re2js: linear-time matching, no backreferences
//   or lookaround). A backtracking engine let one tenant's `^(a+)+$` stall the event loop for
//   seconds on 29 characters; RE2 answers in microseconds, and a pattern RE2 cannot compile is
//   refused when the approval is granted.
// - Strict: an unknown keyword or format is refused at grant (it would otherwise be ignored and
//   accept anything), the formats of ajv-formats are checked, and the root must say
//   `"type": "object"` (arguments are an object; a schema without a type accepts anything).
// The compiled validators are cached by company and text; a schema that compiled at grant
// compiles the same way after a restart.
import type { JsonObject } from '@audit-ledger/core';
import { Ajv, type ValidateFunction } from 'ajv';
import type { RegExpEngine } from 'ajv/dist/types/index.js';
import addFormats from 'ajv-formats';
import { RE2JS } from 're2js';
import { InputError } from '../kernel/domain-error.js';

/**
 * RE2 behind the interface Ajv expects of a regular expression engine (`code.regExp`; `code` is
 * what standalone code generation would import, unused here).
 */
const re2: RegExpEngine = Object.assign(
  (pattern: string, flags: string) => {
    const re = RE2JS.compile(flags.includes('i') ? `(?i)${pattern}` : pattern);
    return { test: (s: string) => re.matcher(s).find() };
  },
  { code: 're2js' },
);

function scope(): Ajv {
  const ajv = new Ajv({ strict: true, strictTypes: false, strictTuples: false, strictRequired: false, allErrors: false, code: { regExp: re2 } });
  addFormats.default(ajv);
  return ajv;
}

const cache = new Map<string, ValidateFunction>();
const CACHE_MAX = 1000;

/**
 * Compiles a company's constraints schema in its own scope (cached by company and text); a schema
 * that is invalid, not strict, not rooted at an object, or whose patterns RE2 cannot run is an
 * input error at `field`.
 */
export function compileConstraints(companyId: string, schema: JsonObject, field: string): ValidateFunction {
  const key = `${companyId}\n${JSON.stringify(schema)}`;
  const hit = cache.get(key);
  if (hit) return hit;
  if (schema.type !== 'object') throw new InputError([{ field: `${field}/type`, message: 'must be "object": constraints describe the arguments object (a schema without a type accepts anything)' }]);
  try {
    const fn = scope().compile(schema);
    if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value as string);
    cache.set(key, fn);
    return fn;
  } catch (err) {
    throw new InputError([{ field, message: `is not a valid JSON Schema here: ${err instanceof Error ? err.message : String(err)}` }]);
  }
}

/**
 * Tests arguments against a stored constraints schema: null when they are within it, or why not.
 * Never throws (a check runs after the execution is committed: it must record a verdict, not fail).
 */
export function outsideConstraints(companyId: string, schema: JsonObject, args: unknown): string | null {
  let validate: ValidateFunction;
  try {
    validate = compileConstraints(companyId, schema, '/constraints');
  } catch (err) {
    return `the standing approval's constraints cannot be evaluated (${err instanceof Error ? err.message : String(err)})`;
  }
  if (validate(args ?? {})) return null;
  const first = validate.errors?.[0];
  return `the arguments are outside the standing approval's constraints${first ? `: ${first.instancePath || '(arguments)'} ${first.message ?? ''}` : ''}`.trim();
}
