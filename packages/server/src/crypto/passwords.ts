// Password hashing with scrypt from node:crypto (no native dependency), stored in a
// self-describing form so the cost can be raised later without breaking old hashes:
//   scrypt$<N>$<r>$<p>$<salt b64url>$<hash b64url>
// Parameters follow the OWASP password storage cheat sheet (N=2^15, r=8, p=3 ≈ 32 MiB).
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

const KEY_LEN = 32;
/** The cost new hashes get: OWASP's (above). A hash keeps its own cost, so verifying never depends on this. */
let cost = { n: 2 ** 15, r: 8, p: 3 };

/**
 * Tests only: new hashes get a cheap cost (N = 2^10, p = 1), so the hundreds of accounts a test
 * run creates do not spend 0.36 s of CPU each to hash and again to log in. Refused outside a
 * Vitest worker (VITEST is set there), so the service can never run with it; spawned service
 * processes in tests keep the production cost.
 */
export function useCheapPasswordCostForTests(): void {
  if (!process.env.VITEST) throw new Error('useCheapPasswordCostForTests: only under Vitest');
  cost = { n: 2 ** 10, r: 8, p: 1 };
}

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // scrypt runs on the libuv thread pool, so it does not block the event loop.
    scrypt(password.normalize('NFC'), salt, KEY_LEN, { N: n, r, p, maxmem: 256 * n * r + 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const { n, r, p } = cost;
  const key = await derive(password, salt, n, r, p);
  return ['scrypt', n, r, p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  const [alg, n, r, p, salt, hash] = stored.split('$');
  if (alg !== 'scrypt' || !n || !r || !p || salt === undefined || hash === undefined) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), Number(n), Number(r), Number(p));
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

let dummy: Promise<string> | undefined;
/**
 * A hash to verify against when the email is unknown, so a wrong email costs the
 * same time as a wrong password and the answer does not reveal which was wrong.
 */
export function dummyPasswordHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(16).toString('hex'));
  return dummy;
}
