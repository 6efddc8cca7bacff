// The cluster project's global setup (vitest.config.ts): the run's database as the default project
// makes it (test/support/global-setup.ts: created and migrated, dropped at the end), then a 3-master
// Redis Cluster of the run's own (test/support/redis-cluster.ts). Tests get its nodes as
// `redisClusterNodes`, so startServer's testEnv runs every server with REDIS_CLUSTER_NODES (and no
// REDIS_URL); `redisUrl` stays the machine's Redis for tests that want a plain one. Tests that kill a
// shard start a cluster of their own: this one is shared by the files running at once. Runs in
// vitest's main process.
import type { TestProject } from "vitest/node";
import databaseSetup from "./global-setup.js";
import { startRedisCluster, type RedisCluster } from "./redis-cluster.js";

export default async function setup(project: TestProject) {
  const dropDatabase = await databaseSetup(project);
  let cluster: RedisCluster;
  try {
    cluster = await startRedisCluster();
  } catch (e) {
    await dropDatabase();
    throw e;
  }
  project.provide("redisClusterNodes", cluster.nodes.join(","));
  return async () => {
    await cluster.stop();
    await dropDatabase();
  };
}
