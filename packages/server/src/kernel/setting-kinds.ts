// The kinds of setting the configuration table (config-table.ts) is made of. Each kind knows how
// to read its variable (a problem names what is wrong, after the variable's name), what its default
// is, and how the README and `.env.example` show both.
import path from 'node:path';

type Env = Record<string, string | undefined>;

/** What reading one variable gives: its value (the default when it is wrong), and what is wrong, if anything. */
export interface Read<T> {
  value: T;
  problem?: string;
}

export interface Setting<T> {
  name: string;
  /** The default as the README and `.env.example` show it: a value, or "(unset…)" in parentheses. */
  shown: string;
  /** Whether `shown` is a value one could write (`8080`), not words about one (`cores`, "(unset)"). */
  literal: boolean;
  /** What it means, with the range a number may take. */
  description: string;
  read(env: Env): Read<T>;
}

/** The variable's text: undefined when unset or blank; trimmed unless `untrimmed`. */
function raw(env: Env, name: string, untrimmed = false): string | undefined {
  const v = env[name];
  if (v === undefined || v.trim() === '') return undefined;
  return untrimmed ? v : v.trim();
}

interface TextOptions {
  /** What "unset" means, shown as "(unset: …)". */
  unset?: string;
  /** Answers what is wrong with a set value (after the name), or undefined. */
  check?: (value: string) => string | undefined;
  /** A file or directory: resolved against the working directory. */
  path?: boolean;
  /** Kept with its spaces (a password). */
  untrimmed?: boolean;
}

/** A text; with a default it is always set. */
export function text(name: string, description: string, options: TextOptions & { default: string }): Setting<string>;
export function text(name: string, description: string, options?: TextOptions): Setting<string | undefined>;
export function text(name: string, description: string, options: TextOptions & { default?: string } = {}): Setting<string | undefined> {
  return {
    name,
    description,
    shown: options.default ?? `(unset${options.unset ? `: ${options.unset}` : ''})`,
    literal: options.default !== undefined,
    read: (env) => {
      const v = raw(env, name, options.untrimmed) ?? options.default;
      if (v === undefined) return { value: undefined };
      const problem = options.check?.(v);
      return problem === undefined ? { value: options.path ? path.resolve(v) : v } : { value: options.default, problem };
    },
  };
}

/** A whole number in [min, max]; its default a number, or computed (then `shown` says how). */
export function int(name: string, description: string, o: { default: number | (() => number); shown?: string; min: number; max: number }): Setting<number> {
  const fallback = () => (typeof o.default === 'function' ? o.default() : o.default);
  return {
    name,
    description: `${description} ${o.min}–${o.max}.`,
    shown: o.shown ?? String(o.default),
    literal: o.shown === undefined,
    read: (env) => {
      const v = raw(env, name);
      if (v === undefined) return { value: fallback() };
      if (!/^\d+$/.test(v) || Number(v) < o.min || Number(v) > o.max) return { value: fallback(), problem: `must be a whole number from ${o.min} to ${o.max}, got "${v}"` };
      return { value: Number(v) };
    },
  };
}

/** A switch written as one of two words (`on`/`off`, `true`/`false`). */
export function flag(name: string, description: string, o: { default: boolean; words: [yes: string, no: string] }): Setting<boolean> {
  const [yes, no] = o.words;
  return {
    name,
    description,
    shown: o.default ? yes : no,
    literal: true,
    read: (env) => {
      const v = raw(env, name);
      if (v === undefined) return { value: o.default };
      if (v === yes || v === no) return { value: v === yes };
      return { value: o.default, problem: `must be ${yes} or ${no}, got "${v}"` };
    },
  };
}

/** A value of its own syntax (a list, a map): `read` is given the trimmed text or undefined. `shown` in parentheses is words about the default, not a value. */
export function custom<T>(name: string, shown: string, description: string, read: (raw: string | undefined) => Read<T>): Setting<T> {
  return { name, shown, literal: !shown.startsWith('('), description, read: (env) => read(raw(env, name)) };
}
