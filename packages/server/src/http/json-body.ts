// The one JSON body parser. A ledger must store exactly what it hashed and hash exactly
// what it was sent, so a body is accepted only when parsing it loses nothing:
//
// - the bytes are UTF-8 (invalid or overlong sequences are refused, never replaced by U+FFFD);
// - every string is well-formed Unicode: no lone surrogate escape such as "\ud800" (drivers
//   store it as U+FFFD while the hash covered the original) and no U+0000 (PostgreSQL text
//   cannot hold it; refused on every store so both answer alike);
// - no object has the same key twice (RFC 8785 §3.1 and I-JSON, RFC 7493 §2.3: last-wins would
//   drop what the client sent);
// - every number is kept exactly: its RFC 8785 form (the shortest round-trip of an IEEE double)
//   must denote the same decimal value as the literal sent, so 1e400 (Infinity), 1e-400 (0),
//   9007199254740993 (rounded to …992) and 0.1000000000000000055511 are refused, while 1.0, 1e2
//   and 0.1 are accepted (stored as 1, 100 and 0.1: the same values, in canonical form);
// - no "__proto__" key, nor "constructor" holding "prototype" (prototype poisoning of any code
//   that later merges the object).
//
// Everything in the body is attacker-controlled. JSON.parse does the syntax (natively, fast);
// one linear scan of the text then checks the rules above without building anything but the
// key sets, and names the offending place as a JSON Pointer.

const decoder = new TextDecoder('utf-8', { fatal: true });

export type JsonBodyProblem = 'malformed_json' | 'invalid_text' | 'duplicate_key' | 'unrepresentable_number';

/** Why a body was refused, and where (a JSON Pointer into the body, "" for the whole). */
export class JsonBodyError extends Error {
  constructor(
    readonly code: JsonBodyProblem,
    readonly pointer: string,
    message: string,
  ) {
    super(message);
    this.name = 'JsonBodyError';
  }
}

/** Decodes and parses a request body under the rules above. Throws JsonBodyError. */
export function parseJsonBody(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw new JsonBodyError('invalid_text', '', `The body is not valid UTF-8 (byte ${firstInvalidUtf8(bytes)} starts an invalid sequence)`);
  }
  return parseJsonText(text);
}

/** Parses JSON text under the rules above. Throws JsonBodyError. */
export function parseJsonText(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new JsonBodyError('malformed_json', '', `The body is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  new Scanner(text).scan();
  return value;
}

interface Frame {
  array: boolean;
  keys: Set<string> | null;
  index: number;
  key: string;
  /** The key this container is the value of (for the constructor.prototype rule). */
  parentKey: string;
}

/** Checks syntactically valid JSON text (JSON.parse accepted it) for the rules above. */
class Scanner {
  private i = 0;
  private readonly stack: Frame[] = [];

  constructor(private readonly s: string) {}

  scan(): void {
    const s = this.s;
    const n = s.length;
    while (this.i < n) {
      const c = s.charCodeAt(this.i);
      if (c === 0x22 /* " */) {
        const top = this.stack[this.stack.length - 1];
        const start = this.i;
        const hasEscape = this.skipString();
        if (top && !top.array && this.nextNonSpace() === 0x3a /* : */) this.onKey(top, start, hasEscape);
        else if (hasEscape) this.checkEscapes(start);
      } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
        const parent = this.stack[this.stack.length - 1];
        this.stack.push({ array: c === 0x5b, keys: null, index: 0, key: '', parentKey: parent && !parent.array ? parent.key : '' });
        this.i++;
      } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
        this.stack.pop();
        this.i++;
      } else if (c === 0x2c /* , */) {
        const top = this.stack[this.stack.length - 1];
        if (top?.array) top.index++;
        this.i++;
      } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
        this.number();
      } else {
        this.i++; // whitespace, ':', true, false, null
      }
    }
  }

  private nextNonSpace(): number {
    let j = this.i;
    const s = this.s;
    while (j < s.length) {
      const c = s.charCodeAt(j);
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return c;
      j++;
    }
    return -1;
  }

  /** The next backslash at or after `from` (cached: a search that finds none must not be repeated for every string). */
  private nextBackslash = -2;
  private backslashFrom(from: number): number {
    if (this.nextBackslash === -1) return -1;
    if (this.nextBackslash < from) this.nextBackslash = this.s.indexOf('\\', from);
    return this.nextBackslash;
  }

  /** Moves past the string starting at this.i; returns whether it holds a backslash. */
  private skipString(): boolean {
    const s = this.s;
    let j = this.i + 1;
    let escaped = false;
    for (;;) {
      const q = s.indexOf('"', j);
      const b = this.backslashFrom(j);
      if (b !== -1 && b < q) {
        escaped = true;
        j = b + 2;
        continue;
      }
      this.i = q + 1;
      return escaped;
    }
  }

  private onKey(top: Frame, start: number, hasEscape: boolean): void {
    if (hasEscape) this.checkEscapes(start);
    const key = hasEscape ? (JSON.parse(this.s.slice(start, this.i)) as string) : this.s.slice(start + 1, this.i - 1);
    top.key = key;
    if (key === '__proto__' || (key === 'prototype' && top.parentKey === 'constructor')) {
      throw new JsonBodyError('malformed_json', this.pointer(), `The key "${key}" is refused (prototype poisoning)`);
    }
    top.keys ??= new Set();
    if (top.keys.has(key)) throw new JsonBodyError('duplicate_key', this.pointer(), `The key "${key}" appears more than once in one object (RFC 8785 and I-JSON forbid duplicate keys)`);
    top.keys.add(key);
  }

  /** Escapes in the string [start, this.i): refuses \u0000 and lone surrogates. */
  private checkEscapes(start: number): void {
    const s = this.s;
    const end = this.i - 1;
    for (let j = s.indexOf('\\', start); j !== -1 && j < end; j = s.indexOf('\\', j)) {
      if (s.charCodeAt(j + 1) !== 0x75 /* u */) {
        j += 2;
        continue;
      }
      const unit = parseInt(s.slice(j + 2, j + 6), 16);
      if (unit === 0) throw this.textError('holds U+0000 (NUL), which is not accepted in any string');
      if (unit >= 0xd800 && unit <= 0xdbff) {
        const next = s.slice(j + 6, j + 8) === '\\u' ? parseInt(s.slice(j + 8, j + 12), 16) : -1;
        if (!(next >= 0xdc00 && next <= 0xdfff)) throw this.textError(`holds a lone surrogate \\u${s.slice(j + 2, j + 6)}, which is not Unicode text`);
        j += 12;
        continue;
      }
      if (unit >= 0xdc00 && unit <= 0xdfff) throw this.textError(`holds a lone surrogate \\u${s.slice(j + 2, j + 6)}, which is not Unicode text`);
      j += 6;
    }
  }

  private textError(what: string): JsonBodyError {
    const top = this.stack[this.stack.length - 1];
    const isKey = top !== undefined && !top.array && this.nextNonSpace() === 0x3a;
    return new JsonBodyError('invalid_text', this.pointer(), `${isKey ? 'An object key' : 'A string'} ${what}`);
  }

  private number(): void {
    const s = this.s;
    const start = this.i;
    let j = start;
    while (j < s.length) {
      const c = s.charCodeAt(j);
      if ((c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45) j++;
      else break;
    }
    this.i = j;
    const literal = s.slice(start, j);
    if (!numberIsExact(literal)) {
      const stored = String(Number(literal));
      throw new JsonBodyError(
        'unrepresentable_number',
        this.pointer(),
        `The number ${literal.length > 40 ? `${literal.slice(0, 40)}…` : literal} cannot be kept exactly (as an IEEE 754 double it would be ${stored}); send it as a string`,
      );
    }
  }

  /** The JSON Pointer of the value being read (RFC 6901). */
  private pointer(): string {
    let p = '';
    for (const f of this.stack) p += `/${f.array ? f.index : f.key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    return p;
  }
}

/**
 * Whether the RFC 8785 serialization of the double nearest to `literal` denotes exactly the
 * decimal value of `literal`. Fast path: at most 15 significant digits and a modest exponent
 * always round-trip (DBL_DIG is 15).
 */
export function numberIsExact(literal: string): boolean {
  const m = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  if (!m) return false;
  const int = m[1] as string;
  const frac = m[2] ?? '';
  const exp = m[3] === undefined ? 0 : Number(m[3]);
  const digits = (int + frac).replace(/^0+/, '');
  if (digits === '') return true; // zero in any spelling (-0 is stored as 0: the same value)
  const significant = digits.replace(/0+$/, '');
  if (significant.length <= 15 && Math.abs(exp) < 280 && int.length + frac.length < 300) return true;
  const value = Number(literal);
  if (!Number.isFinite(value) || value === 0) return false;
  return sameDecimal(decimalOf(literal), decimalOf(String(Math.abs(value))));
}

/** A positive decimal as (significant digits without leading or trailing zeros, exponent of the last digit). */
function decimalOf(text: string): { digits: string; exp: number } {
  const m = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text) as RegExpExecArray;
  const int = m[1] as string;
  const frac = m[2] ?? '';
  let exp = (m[3] === undefined ? 0 : Number(m[3])) - frac.length;
  let digits = (int + frac).replace(/^0+/, '');
  const trimmed = digits.replace(/0+$/, '');
  exp += digits.length - trimmed.length;
  digits = trimmed;
  return { digits, exp };
}

function sameDecimal(a: { digits: string; exp: number }, b: { digits: string; exp: number }): boolean {
  return a.digits === b.digits && a.exp === b.exp;
}

/** The offset of the first byte that is not part of a valid UTF-8 sequence (for the message). */
function firstInvalidUtf8(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number;
    if (b < 0x80) continue;
    let need = 0;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) need = 2;
    else if (b >= 0xf0 && b <= 0xf4) need = 3;
    else return i;
    try {
      decoder.decode(bytes.subarray(i, i + need + 1));
    } catch {
      return i;
    }
    i += need;
  }
  return bytes.length;
}
