/**
 * `node bench/compile-cache.ts`: a raw gateway start (spawn → /readyz, unsandboxed, as bench/engine.ts's baseline)
 * with Node's compile cache off, cold (an empty directory) and warm (the directory a previous start filled), in
 * rotation, BENCH_RUNS (3) rounds. The cache is given as OpenClaw's launcher expects it (NODE_COMPILE_CACHE with its
 * respawn marked done), so that no start pays a respawn. BENCH_CPU_PROF=<dir>: each start also writes a CPU profile
 * (`node --cpu-prof`) into <dir>/<round label>.
 */
import { spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { homedir, tmpdir } from "node:os"
import { join } from "node:path"
import { OpenClawAgentHome } from "@cairn/agent-engine-openclaw"
import { Redacted } from "effect"

const runs = Number(process.env["BENCH_RUNS"] ?? 3)
const version = process.env["OPENCLAW_VERSION"] ?? "2026.9.6"
const enginesDir = process.env["OPENCLAW_ENGINES_DIR"] ?? join(homedir(), ".cache", "cairn", "openclaw-engines")
const entry = join(enginesDir, version, "node_modules", "openclaw", "openclaw.mjs")
const dir = mkdtempSync(join(tmpdir(), "cairn-bench-compile-cache-"))
const warmCache = join(dir, "warm-cache")
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

type Mode = "off" | "cold" | "warm"
const start = async (mode: Mode, label: string, port: number) => {
  const home = join(dir, label)
  mkdirSync(join(home, ".openclaw", "logs"), { recursive: true })
  writeFileSync(OpenClawAgentHome.configPath(home), JSON.stringify(OpenClawAgentHome.offlineConfig(home, port)))
  const cache = mode === "warm" ? warmCache : join(dir, `${label}-cache`)
  const env = {
    ...OpenClawAgentHome.processEnv({ PATH: process.env["PATH"] }, home, Redacted.make("bench-token")),
    TMPDIR: join(home, "tmp"),
    ...(mode === "off" ? { NODE_DISABLE_COMPILE_CACHE: "1" } : { NODE_COMPILE_CACHE: cache, OPENCLAW_PACKAGED_COMPILE_CACHE_RESPAWNED: "1" })
  }
  mkdirSync(env.TMPDIR, { recursive: true })
  const startedAt = performance.now()
  const profile = process.env["BENCH_CPU_PROF"] === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", join(process.env["BENCH_CPU_PROF"], label)]
  const child = spawn(process.execPath, [...profile, entry, "gateway", "run", "--port", String(port), "--bind", "loopback"], {
    cwd: home, stdio: "ignore", detached: true, env
  })
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200) break
    } catch { /* not yet */ }
    await sleep(50)
  }
  const elapsed = performance.now() - startedAt
  process.kill(-child.pid!, "SIGTERM")
  await new Promise((resolve) => child.once("exit", resolve))
  return elapsed
}

try {
  // The first start fills the warm directory (and warms the page cache).
  console.log(`fill: ${(await start("warm", "fill", 24000) / 1000).toFixed(2)} s (cold, into ${warmCache})`)
  const times: Record<Mode, Array<number>> = { off: [], cold: [], warm: [] }
  const modes: Array<Mode> = ["off", "cold", "warm"]
  for (let round = 0; round < runs; round++) {
    for (let i = 0; i < modes.length; i++) {
      const mode = modes[(round + i) % modes.length]!
      const elapsed = await start(mode, `${mode}-${round}`, 24120 + round * 360 + i * 120)
      times[mode].push(elapsed)
      console.log(`round ${round + 1} ${mode}: ${(elapsed / 1000).toFixed(2)} s`)
    }
  }
  for (const mode of modes) console.log(`${mode}: median ${(median(times[mode]) / 1000).toFixed(2)} s (${times[mode].map((t) => (t / 1000).toFixed(2)).join(", ")})`)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
