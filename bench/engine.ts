/**
 * `npm run bench:engine`: how long an agent takes from `POST /v0/agents` to `running` on a real Cairn server
 * (default engine: OpenClaw), median of BENCH_RUNS (3), and the resident memory of each idle gateway; against a raw
 * baseline in the same run: the same OpenClaw version started by hand (`node openclaw.mjs gateway run` with the same
 * offline config) and polled on /readyz. Paired rounds (Paired.ts): each round starts one agent through Cairn and
 * one gateway by hand, the order rotating; it prints the median and min–max of the per-round ratios, raw time over
 * Cairn's time. An agent is timed to `running`; its idle wait, memory reading and deletion are not timed. After its
 * idle wait each measured agent is restarted (`POST …/restart`, timed to its answer, which comes once the gateway runs
 * again), outside the paired timing.
 *
 * `BENCH_POOL_SIZE` (0) runs the server with a warm pool of that many gateways (AGENT_POOL_SIZE; decision 0058): each
 * create is then timed once the pool is full again, as a create finds it when creates do not come faster than the
 * pool refills; the wait for the refill is not timed.
 *
 * Engines are installed into OPENCLAW_ENGINES_DIR (the CI cache by default), once; the install is timed apart.
 * Linux only (memory is read from /proc).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { homedir, tmpdir } from "node:os"
import { join } from "node:path"
import { processesUnder } from "@cairn/agent-engine-openclaw/testing"
import { Effect } from "effect"
import { newApiUser, startServer, waitUntilServing } from "@cairn/server-node/testing"
import * as Paired from "./Paired.ts"
import { rawGatewayStart } from "./RawGateway.ts"

const runs = Number(process.env["BENCH_RUNS"] ?? 3)
const idleSeconds = Number(process.env["BENCH_IDLE_SECONDS"] ?? 10)
const poolSize = Number(process.env["BENCH_POOL_SIZE"] ?? 0)
const enginesDir = process.env["OPENCLAW_ENGINES_DIR"] ?? join(homedir(), ".cache", "cairn", "openclaw-engines")
const dataDir = mkdtempSync(join(tmpdir(), "cairn-bench-engine-"))
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const seconds = (ms: number) => ms < 1000 ? `${ms.toFixed(0)} ms` : `${(ms / 1000).toFixed(1)} s`

/** RSS and PSS (MB) of a gateway and its workers. */
const memoryUnder = (home: string) => {
  const processes = processesUnder(home)
  const sum = (kb: (p: (typeof processes)[number]) => number) => processes.reduce((total, p) => total + kb(p), 0) / 1024
  return { rss: sum((p) => p.rssKb), pss: sum((p) => p.pssKb) }
}

const waitUntil = async (check: () => Promise<boolean>, what: string, timeoutMs = 300_000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`)
    await sleep(100)
  }
}

const server = await startServer({ DATA_DIR: dataDir, ENGINE: undefined, OPENCLAW_ENGINES_DIR: enginesDir, OPENCLAW_BASE_PORT: "21000", AGENT_POOL_SIZE: String(poolSize) })
try {
  await waitUntilServing(server)
  const api = newApiUser({ url: server.url, dataDir }, { workspace: "bench", agentLimit: 1, scopes: "org:agents" })
  const call = async (method: string, path: string, body?: unknown) => (await api.call(method, path, body)).body
  const cairnTimes: Array<number> = []
  const rawTimes: Array<number> = []
  const restartTimes: Array<number> = []
  const memory: Array<{ rss: number; pss: number }> = []
  let version = ""

  /** Gateways waiting in the pool, from /metrics. */
  const poolReady = async () => {
    const metrics = await (await fetch(`${server.url}/metrics`)).text()
    return Number(/^cairn_agent_pool_ready (\d+)/m.exec(metrics)?.[1] ?? 0)
  }

  /** One agent through Cairn, timed from the request to `running`; then left idle, measured and deleted, untimed. */
  const cairnStart = async (label: string, idle: boolean) => {
    if (poolSize > 0) await waitUntil(async () => (await poolReady()) >= poolSize, "the pool full")
    const startedAt = performance.now()
    const { agent } = await call("POST", "/v0/agents", { name: `bench ${label}` })
    await waitUntil(async () => (await call("GET", `/v0/agents/${agent.agentId}`)).agent.status === "running", "agent running")
    const elapsed = performance.now() - startedAt
    version = agent.engineVersion
    if (idle) {
      await sleep(idleSeconds * 1000)
      memory.push(memoryUnder(join(dataDir, "agents", agent.agentId)))
      // A restart, timed apart: the answer comes once the gateway runs again (a cold start: the pool cannot serve it),
      // with the pool's refill done first so that the two starts do not share the cores.
      if (poolSize > 0) await waitUntil(async () => (await poolReady()) >= poolSize, "the pool full")
      const restartedAt = performance.now()
      const restarted = await api.call("POST", `/v0/agents/${agent.agentId}/restart`, {})
      if (restarted.status !== 200) throw new Error(`restart answered ${restarted.status}: ${JSON.stringify(restarted.body)}`)
      restartTimes.push(performance.now() - restartedAt)
    }
    await call("DELETE", `/v0/agents/${agent.agentId}`)
    // The pool's refill (a gateway start) is not left to run beside the next raw start.
    if (poolSize > 0) await waitUntil(async () => (await poolReady()) >= poolSize, "the pool full again")
    return elapsed
  }

  /** The same version started by hand with the same offline config, timed from the spawn to /readyz; then stopped. */
  const rawStart = (label: string, port: number) => rawGatewayStart(enginesDir, version, join(dataDir, "raw", label), port)

  // Warm-up, one of each: installs the engine version if the cache does not have it yet, and fills the page cache.
  console.log(`warm-up (installs the engine version if not cached): ${seconds(await cairnStart("warm-up", false))} to running (${version})`)
  console.log(`raw warm-up: ${seconds(await rawStart("warm-up", 23000))} to ready`)

  const paired = await Effect.runPromise(Paired.rounds({
    rounds: runs,
    measured: (round) =>
      Effect.promise(async () => {
        const elapsed = await cairnStart(String(round + 1), true)
        cairnTimes.push(elapsed)
        console.log(`run ${round + 1}: ${seconds(elapsed)} to running; idle after ${idleSeconds} s: RSS ${memory.at(-1)!.rss.toFixed(0)} MB, PSS ${memory.at(-1)!.pss.toFixed(0)} MB; restart ${seconds(restartTimes.at(-1)!)}`)
        return { operations: 1, milliseconds: elapsed }
      }),
    baselines: {
      raw: (round) =>
        Effect.promise(async () => {
          const elapsed = await rawStart(String(round + 1), 23000 + (round + 1) * 120)
          rawTimes.push(elapsed)
          console.log(`raw ${round + 1}: ${seconds(elapsed)} to ready`)
          return { operations: 1, milliseconds: elapsed }
        })
    }
  }))

  console.log(`\nOpenClaw ${version}, ${runs} paired rounds (medians), warm pool ${poolSize > 0 ? `of ${poolSize}` : "off"}:`)
  console.log(`  POST /v0/agents -> running: ${seconds(median(cairnTimes))} (slowest ${seconds(Math.max(...cairnTimes))})   (target <= 3 s)`)
  console.log(`  POST /v0/agents/{id}/restart: ${seconds(median(restartTimes))} (slowest ${seconds(Math.max(...restartTimes))})`)
  console.log(`  raw gateway spawn -> ready: ${seconds(median(rawTimes))}`)
  console.log(`  ratio raw/Cairn:             ${Paired.show(paired.ratios.raw)}`)
  console.log(`  idle gateway (after ${idleSeconds} s): RSS ${median(memory.map((m) => m.rss)).toFixed(0)} MB, PSS ${median(memory.map((m) => m.pss)).toFixed(0)} MB`)
  server.child.kill("SIGTERM")
  await server.exited
} finally {
  if (server.child.exitCode === null) server.child.kill("SIGKILL")
  rmSync(dataDir, { recursive: true, force: true })
}
