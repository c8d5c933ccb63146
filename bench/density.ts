/**
 * `npm run bench:density`: how many agents one node holds when most of them sleep (decision 0055). A real server
 * (OpenClaw by default; `BENCH_ENGINE=simulated` for a quick run of the harness) with `AGENT_IDLE_AFTER`
 * (`BENCH_IDLE_AFTER`, 30 seconds) creates `BENCH_AGENTS` (100) agents, two at a time, each left to fall asleep.
 * Then, for `BENCH_MINUTES` (10), `BENCH_ACTIVE` (10) of them are active at any time, in rotation: every
 * `BENCH_SLOT_SECONDS / BENCH_ACTIVE` seconds the next agent (in creation order, round and round) becomes active
 * for `BENCH_SLOT_SECONDS` (60), as a user would: a request that needs its gateway (its runtime config, through the
 * gateway's RPC) at once, then one every 5 s. A client that is answered 503 does as `Retry-After` says.
 *
 * It prints the wake latency (an active agent's first request, when it was asleep: from the request to the answer)
 * as median and p95, against a raw gateway spawn in the same run (RawGateway.ts, on the idle node after the
 * rotation); the requests answered 503 and retried, and those that failed (must be 0); the peak resident memory of
 * the node (Cairn and every gateway) and of the gateways alone; and the most agents awake at once.
 */
import { processesUnder } from "@cairn/agent-engine-openclaw/testing"
import { newApiUser, startServer, waitUntilServing } from "@cairn/server-node/testing"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { homedir, tmpdir } from "node:os"
import { join } from "node:path"
import { rawGatewayStart } from "./RawGateway.ts"

const agentCount = Number(process.env["BENCH_AGENTS"] ?? 100)
const activeCount = Number(process.env["BENCH_ACTIVE"] ?? 10)
const minutes = Number(process.env["BENCH_MINUTES"] ?? 10)
const slotMs = Number(process.env["BENCH_SLOT_SECONDS"] ?? 60) * 1000
const idleAfter = process.env["BENCH_IDLE_AFTER"] ?? "30 seconds"
const engine = process.env["BENCH_ENGINE"] ?? "openclaw"
const enginesDir = process.env["OPENCLAW_ENGINES_DIR"] ?? join(homedir(), ".cache", "cairn", "openclaw-engines")
const dataDir = mkdtempSync(join(tmpdir(), "cairn-bench-density-"))
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const quantile = (values: ReadonlyArray<number>, q: number) => {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
}
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`
const rssMB = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024

const server = await startServer({
  DATA_DIR: dataDir,
  ENGINE: engine === "openclaw" ? undefined : engine,
  OPENCLAW_ENGINES_DIR: enginesDir,
  OPENCLAW_BASE_PORT: "24000",
  AGENT_IDLE_AFTER: idleAfter
})
const stats = { wakes: [] as Array<number>, awakeFirst: 0, requests: 0, retried: 0, failed: [] as Array<string>, peakNodeMB: 0, peakGatewaysMB: 0, peakAwake: 0 }
let sampling = true
try {
  await waitUntilServing(server)
  const api = newApiUser({ url: server.url, dataDir }, { workspace: "density", agentLimit: agentCount, scopes: "org:agents" })

  /** The node's memory and the agents awake, every 2 s, for as long as the bench runs. */
  const sampler = (async () => {
    while (sampling) {
      const gateways = processesUnder(join(dataDir, "agents")).reduce((total, p) => total + p.rssKb, 0) / 1024
      stats.peakGatewaysMB = Math.max(stats.peakGatewaysMB, gateways)
      stats.peakNodeMB = Math.max(stats.peakNodeMB, gateways + rssMB(server.child.pid!))
      const listed = (await api.call("GET", "/v0/agents")).body?.agents as Array<{ status: string }> | undefined
      stats.peakAwake = Math.max(stats.peakAwake, (listed ?? []).filter((a) => a.status === "running" || a.status === "starting").length)
      await sleep(2000)
    }
  })()

  const statusOf = async (agentId: string) => (await api.call("GET", `/v0/agents/${agentId}`)).body?.agent?.status as string
  const until = async (agentId: string, wanted: string, timeoutMs = 600_000) => {
    const deadline = Date.now() + timeoutMs
    while ((await statusOf(agentId)) !== wanted) {
      if (Date.now() > deadline) throw new Error(`agent ${agentId} never ${wanted}`)
      await sleep(250)
    }
  }

  /** One request that needs the gateway, as a client makes it: a 503 waits as `Retry-After` says and tries again. */
  const touch = async (agentId: string) => {
    const startedAt = performance.now()
    for (let attempt = 0; attempt < 20; attempt++) {
      stats.requests++
      const response = await fetch(`${server.url}/v0/agents/${agentId}/config`, { headers: { authorization: `Bearer ${api.token}` } })
      await response.arrayBuffer()
      if (response.status === 200) return performance.now() - startedAt
      if (response.status !== 503) {
        stats.failed.push(`${agentId}: ${response.status}`)
        return undefined
      }
      stats.retried++
      await sleep(Number(response.headers.get("retry-after") ?? 5) * 1000)
    }
    stats.failed.push(`${agentId}: still 503 after 20 tries`)
    return undefined
  }

  // The agents, two at a time, each waited for until it runs.
  const agents: Array<string> = []
  const createdAt = performance.now()
  const createOne = async (i: number) => {
    const created = await api.call("POST", "/v0/agents", { name: `density ${i}` })
    if (created.status !== 201) throw new Error(`create ${i}: ${created.status} ${JSON.stringify(created.body)}`)
    agents[i] = created.body.agent.agentId as string
    await until(agents[i]!, "running")
  }
  for (let i = 0; i < agentCount; i += 2) await Promise.all([createOne(i), ...(i + 1 < agentCount ? [createOne(i + 1)] : [])])
  console.log(`${agentCount} agents created in ${seconds(performance.now() - createdAt)}; waiting for the first ones to sleep`)
  await until(agents[0]!, "sleeping")

  /** One activation: a request at once (the wake, if it slept), then one every 5 s until its slot ends. */
  const activate = async (agentId: string) => {
    const asleep = (await statusOf(agentId)) === "sleeping"
    const ends = performance.now() + slotMs
    const first = await touch(agentId)
    if (first !== undefined) {
      if (asleep) stats.wakes.push(first)
      else stats.awakeFirst++
    }
    while (performance.now() < ends) {
      await sleep(5000)
      await touch(agentId)
    }
  }

  const rotationStart = performance.now()
  const every = slotMs / activeCount
  const activations: Array<Promise<void>> = []
  for (let k = 0; performance.now() - rotationStart < minutes * 60_000; k++) {
    activations.push(activate(agents[k % agentCount]!))
    await sleep(Math.max(0, rotationStart + (k + 1) * every - performance.now()))
  }
  await Promise.all(activations)
  sampling = false
  await sampler

  // The raw baseline on the node as the rotation left it (gateways asleep or idle): three spawns, the median.
  const version = (await api.call("GET", `/v0/agents/${agents[0]}`)).body.agent.engineVersion as string
  const raw: Array<number> = []
  if (engine === "openclaw") {
    for (let i = 0; i < 3; i++) raw.push(await rawGatewayStart(enginesDir, version, join(dataDir, "raw", String(i)), 23500 + i * 120))
  }

  const wakeMedian = quantile(stats.wakes, 0.5)
  console.log(`\n${engine} ${engine === "openclaw" ? version : ""}: ${agentCount} agents, ${activeCount} active at a time in rotation for ${minutes} min (idle after ${idleAfter}):`)
  console.log(`  wakes: ${stats.wakes.length}, median ${seconds(wakeMedian)}, p95 ${seconds(quantile(stats.wakes, 0.95))} (goal <= 3 s); ${stats.awakeFirst} activations found the agent awake`)
  if (raw.length > 0) console.log(`  raw gateway spawn -> ready: median ${seconds(quantile(raw, 0.5))}; ratio raw/wake ${(quantile(raw, 0.5) / wakeMedian).toFixed(2)}x`)
  console.log(`  requests: ${stats.requests}, answered 503 and retried: ${stats.retried}, failed: ${stats.failed.length} (must be 0)${stats.failed.length === 0 ? "" : `: ${stats.failed.slice(0, 5).join("; ")}`}`)
  console.log(`  peak memory: node ${stats.peakNodeMB.toFixed(0)} MB (gateways ${stats.peakGatewaysMB.toFixed(0)} MB); most agents awake at once: ${stats.peakAwake}`)
  server.child.kill("SIGTERM")
  await server.exited
} finally {
  sampling = false
  if (server.child.exitCode === null) server.child.kill("SIGKILL")
  rmSync(dataDir, { recursive: true, force: true })
}
