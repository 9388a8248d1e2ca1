// Runs in every test worker before its file: passwords the tests create are hashed at a cheap
// scrypt cost (crypto/passwords.ts; refused outside Vitest). Services spawned as child processes,
// and the service itself, keep the production cost; a hash carries its own cost, so hashes made
// here verify anywhere. And no child process outlives its test file.
import { afterAll } from 'vitest';
import { useCheapPasswordCostForTests } from '../../src/crypto/passwords.js';
import { killSpawned } from './process.js';

useCheapPasswordCostForTests();

// Every service or witness a file started through spawnCli dies with the file, even when a test
// failed before stopping it (an orphaned `serve` kept running after such a failure), and with the
// worker process if it exits first.
afterAll(killSpawned);
process.once('exit', killSpawned);
