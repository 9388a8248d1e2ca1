// The global setup of the `citus` project (vitest.config.ts): one Citus cluster (a coordinator and
// two workers of its own, helpers/citus.ts) for the run, its ports handed to the suites with
// provide/inject; each suite's store gets a database of its own on it (helpers/stores.ts). The
// cluster is dropped when the run ends. Clusters left by runs that died are dropped first.
import type { TestProject } from 'vitest/node';
import { type CitusPorts, citusCluster, dropLeftoverCitusClusters } from './citus.js';

declare module 'vitest' {
  export interface ProvidedContext {
    citus: CitusPorts;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  dropLeftoverCitusClusters();
  const cluster = await citusCluster('suites');
  project.provide('citus', cluster.ports);
  return () => cluster.drop();
}
