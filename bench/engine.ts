/**
 * `npm run bench:engine`: how long an agent takes from `POST /v0/agents` to `running` on a real Cairn server
 * (default engine: OpenClaw), median of BENCH_RUNS (3), and the resident memory of each idle gateway; against a raw
 * baseline in the same run: the same OpenClaw version started by hand (`node openclaw.mjs gateway run` with the same
 * offline config) and polled on /readyz. The ratio is Cairn's time over the raw time.
 *
 * Engines are installed into OPENCLAW_ENGINES_DIR (the CI cache by default), once; the install is timed apart.
 * Linux only (memory is read from /proc).
 */
import { spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { homedir, tmpdir } from "node:os"
import { join } from "node:path"
import { OpenClawAgentHome } from "@cairn/agent-engine-openclaw"
import { processesUnder } from "@cairn/agent-engine-openclaw/testing"
import { Redacted } from "effect"
import { newApiUser, startServer, waitUntilServing } from "@cairn/server-node/testing"

const runs = Number(process.env["BENCH_RUNS"] ?? 3)
const idleSeconds = Number(process.env["BENCH_IDLE_SECONDS"] ?? 10)
const enginesDir = process.env["OPENCLAW_ENGINES_DIR"] ?? join(homedir(), ".cache", "cairn", "openclaw-engines")
const dataDir = mkdtempSync(join(tmpdir(), "cairn-bench-engine-"))
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`

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

const server = await startServer({ DATA_DIR: dataDir, ENGINE: undefined, OPENCLAW_ENGINES_DIR: enginesDir, OPENCLAW_BASE_PORT: "21000" })
try {
  await waitUntilServing(server)
  const api = newApiUser({ url: server.url, dataDir }, { workspace: "bench", agentLimit: 1, scopes: "org:agents" })
  const call = async (method: string, path: string, body?: unknown) => (await api.call(method, path, body)).body
  const cairnTimes: Array<number> = []
  const memory: Array<{ rss: number; pss: number }> = []
  let version = ""
  // Run 0 warms up: it installs the engine version if the cache does not have it yet.
  for (let run = 0; run <= runs; run++) {
    const startedAt = Date.now()
    const { agent } = await call("POST", "/v0/agents", { name: `bench ${run}` })
    await waitUntil(async () => (await call("GET", `/v0/agents/${agent.agentId}`)).agent.status === "running", "agent running")
    const elapsed = Date.now() - startedAt
    version = agent.engineVersion
    if (run === 0) {
      console.log(`warm-up (installs ${version} if not cached): ${seconds(elapsed)} to running`)
    } else {
      cairnTimes.push(elapsed)
      await sleep(idleSeconds * 1000)
      memory.push(memoryUnder(join(dataDir, "agents", agent.agentId)))
      console.log(`run ${run}: ${seconds(elapsed)} to running; idle after ${idleSeconds} s: RSS ${memory.at(-1)!.rss.toFixed(0)} MB, PSS ${memory.at(-1)!.pss.toFixed(0)} MB`)
    }
    await call("DELETE", `/v0/agents/${agent.agentId}`)
  }
  server.child.kill("SIGTERM")
  await server.exited

  // The raw baseline: the same version, started by hand with the same offline config, polled on /readyz.
  const rawTimes: Array<number> = []
  const entry = join(enginesDir, version, "node_modules", "openclaw", "openclaw.mjs")
  for (let run = 1; run <= runs; run++) {
    const home = join(dataDir, "raw", String(run))
    const port = 23000 + run * 120
    mkdirSync(join(home, ".openclaw", "logs"), { recursive: true })
    writeFileSync(OpenClawAgentHome.configPath(home), JSON.stringify(OpenClawAgentHome.offlineConfig(home, port)))
    const startedAt = Date.now()
    const child = spawn(process.execPath, [entry, "gateway", "run", "--port", String(port), "--bind", "loopback"], {
      cwd: home,
      stdio: "ignore",
      detached: true,
      env: OpenClawAgentHome.processEnv({ PATH: process.env["PATH"] }, home, Redacted.make("raw-baseline-token"))
    })
    await waitUntil(async () => {
      try {
        return (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200
      } catch {
        return false
      }
    }, "raw gateway ready")
    rawTimes.push(Date.now() - startedAt)
    console.log(`raw ${run}: ${seconds(rawTimes.at(-1)!)} to ready`)
    process.kill(-child.pid!, "SIGTERM")
    await new Promise((resolve) => child.once("exit", resolve))
  }

  const cairn = median(cairnTimes)
  const raw = median(rawTimes)
  console.log(`\nOpenClaw ${version}, ${runs} runs each (medians):`)
  console.log(`  POST /v0/agents -> running: ${seconds(cairn)}   (target < 15 s)`)
  console.log(`  raw gateway spawn -> ready: ${seconds(raw)}`)
  console.log(`  ratio raw/Cairn:             ${(raw / cairn).toFixed(2)}x`)
  console.log(`  idle gateway (after ${idleSeconds} s): RSS ${median(memory.map((m) => m.rss)).toFixed(0)} MB, PSS ${median(memory.map((m) => m.pss)).toFixed(0)} MB`)
} finally {
  if (server.child.exitCode === null) server.child.kill("SIGKILL")
  rmSync(dataDir, { recursive: true, force: true })
}
