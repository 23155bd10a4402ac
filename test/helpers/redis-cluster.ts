// The local Redis Cluster lives with the tools (scripts/redis-cluster.ts): benchmarks use it too,
// and tools must not import test code. Tests keep importing it from here.
export * from '../../scripts/redis-cluster.js';
