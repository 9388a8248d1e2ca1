// Runs in every test worker before its file: passwords the tests create are hashed at a cheap
// scrypt cost (auth/passwords.ts; refused outside Vitest). Services spawned as child processes,
// and the service itself, keep the production cost; a hash carries its own cost, so hashes made
// here verify anywhere.
import { useCheapPasswordCostForTests } from '../../src/auth/passwords.js';

useCheapPasswordCostForTests();
