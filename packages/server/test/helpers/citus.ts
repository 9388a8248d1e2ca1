// The Citus cluster maker lives with the bench (bench/citus-cluster.ts), which its Citus part uses too.
export * from '../../bench/citus-cluster.js';
