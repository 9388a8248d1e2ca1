import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

// The package's package.json: two levels up from src/kernel/, three from dist/src/kernel/.
function readVersion(): string {
  for (const rel of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = require(rel) as { name?: string; version?: string };
      if (pkg.name === 'audit-ledger' && pkg.version) return pkg.version;
    } catch {
      // try the next location
    }
  }
  return '0.0.0';
}

export const VERSION: string = readVersion();
