/**
 * Several Cairn nodes as one installation, for end-to-end tests (decision 0028): a fresh database on the Postgres
 * server `DATABASE_URL` points at, and nodes on it, each a real server process with its own data directory and
 * `CAIRN_INTERNAL_URL`, node B given the keys node A made (every node of one installation needs the same). What a
 * test starts is undone by the cleanups it passes, in reverse order, in its `afterAll`.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort, type ServerProcess, startServer, waitUntilServing } from "./ServerProcess.ts"

/** What to undo after the tests, run last first. */
export type Cleanups = Array<() => unknown>

export interface Node {
  readonly server: ServerProcess
  readonly dataDir: string
  /** Its CAIRN_NODE_ID. */
  readonly node: string
}

/** A fresh database on `url`'s server, dropped afterwards. */
export const freshDatabase = (url: string, cleanups: Cleanups) => {
  const parsed = new URL(url)
  const name = `cairn_cluster_${process.pid}_${Date.now()}`
  const env = { ...process.env, PGHOST: parsed.hostname, PGPORT: parsed.port || "5432", PGUSER: decodeURIComponent(parsed.username || "postgres"), PGPASSWORD: decodeURIComponent(parsed.password) }
  execFileSync("createdb", [name], { env })
  cleanups.push(() => execFileSync("dropdb", ["--force", "--if-exists", name], { env }))
  parsed.pathname = `/${name}`
  return parsed.toString()
}

/** A node of its own data directory, serving; stopped and its directory removed by the cleanups. */
export const startNode = async (name: string, env: Record<string, string>, cleanups: Cleanups): Promise<Node> => {
  const dataDir = mkdtempSync(join(tmpdir(), `cairn-cluster-${name}-`))
  const port = await freePort()
  const server = await startServer({
    ...env,
    PORT: String(port),
    DATA_DIR: dataDir,
    CAIRN_NODE_ID: `${name}-${process.pid}`,
    CAIRN_INTERNAL_URL: `http://127.0.0.1:${port}`
  })
  cleanups.push(async () => {
    if (server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill("SIGTERM")
      await server.exited
    }
    rmSync(dataDir, { recursive: true, force: true })
  })
  await waitUntilServing(server)
  return { server, dataDir, node: `${name}-${process.pid}` }
}

/**
 * What the nodes of one test cluster share: a fresh database on `databaseUrl`'s server, a snapshot blockstore, and
 * short leases so a failover is quick.
 */
export const clusterEnv = (databaseUrl: string, cleanups: Cleanups, extra: Record<string, string> = {}): Record<string, string> => {
  const blocks = mkdtempSync(join(tmpdir(), "cairn-cluster-blocks-"))
  cleanups.push(() => rmSync(blocks, { recursive: true, force: true }))
  return {
    DATABASE_URL: freshDatabase(databaseUrl, cleanups),
    ENGINE: "simulated",
    SNAPSHOT_BLOCKS_DIR: blocks,
    SNAPSHOT_INTERVAL: "0",
    CAIRN_LEASE_TTL: "4 seconds",
    CAIRN_HEARTBEAT_INTERVAL: "1 second",
    ...extra
  }
}

/** Another node of the installation `first` began: given the keys `first` made (every node needs the same). */
export const joinNode = (first: Node, name: string, env: Record<string, string>, cleanups: Cleanups) =>
  startNode(name, {
    ...env,
    CAIRN_SIGNING_KEY: readFileSync(join(first.dataDir, "signing-key.json"), "utf8"),
    CAIRN_GATEWAY_KEY: readFileSync(join(first.dataDir, "gateway-key"), "utf8").trim(),
    ADMIN_TOKEN: readFileSync(join(first.dataDir, "admin-token"), "utf8").trim()
  }, cleanups)

/** Two nodes on one fresh database on `databaseUrl`'s server (clusterEnv); node B gets the keys node A made. */
export const startTwoNodes = async (databaseUrl: string, cleanups: Cleanups, extra: Record<string, string> = {}) => {
  const shared = clusterEnv(databaseUrl, cleanups, extra)
  const a = await startNode("a", shared, cleanups)
  const b = await joinNode(a, "b", shared, cleanups)
  return { a, b }
}
