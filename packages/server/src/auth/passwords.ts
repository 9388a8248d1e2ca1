// Password hashing with scrypt from node:crypto (no native dependency), stored in a
// self-describing form so the cost can be raised later without breaking old hashes:
//   scrypt$<N>$<r>$<p>$<salt b64url>$<hash b64url>
// Parameters follow the OWASP password storage cheat sheet (N=2^15, r=8, p=3 ≈ 32 MiB).
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

const N = 2 ** 15;
const R = 8;
const P = 3;
const KEY_LEN = 32;

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
  const key = await derive(password, salt, N, R, P);
  return ['scrypt', N, R, P, salt.toString('base64url'), key.toString('base64url')].join('$');
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
