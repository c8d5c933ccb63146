/**
 * The raw baseline of the engine benchmarks: one OpenClaw gateway started by hand, unsandboxed, with the offline
 * config Cairn writes (`node openclaw.mjs gateway run`), timed from the spawn to its first 200 on /readyz, then
 * stopped. What a gateway start costs with nothing of Cairn's around it.
 */
import { OpenClawAgentHome } from "@cairn/agent-engine-openclaw"
import { spawn } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Redacted } from "effect"

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const ready = async (port: number) => {
  try {
    return (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200
  } catch {
    return false
  }
}

/** Milliseconds from the spawn of `version`'s gateway in `home` on `port` to ready; the gateway is stopped after. */
export const rawGatewayStart = async (enginesDir: string, version: string, home: string, port: number, timeoutMs = 300_000) => {
  const entry = join(enginesDir, version, "node_modules", "openclaw", "openclaw.mjs")
  mkdirSync(join(home, ".openclaw", "logs"), { recursive: true })
  writeFileSync(OpenClawAgentHome.configPath(home), JSON.stringify(OpenClawAgentHome.offlineConfig(home, port)))
  const startedAt = performance.now()
  const child = spawn(process.execPath, [entry, "gateway", "run", "--port", String(port), "--bind", "loopback"], {
    cwd: home,
    stdio: "ignore",
    detached: true,
    env: OpenClawAgentHome.processEnv({ PATH: process.env["PATH"] }, home, Redacted.make("raw-baseline-token"))
  })
  const deadline = Date.now() + timeoutMs
  while (!(await ready(port))) {
    if (Date.now() > deadline) throw new Error("timed out: raw gateway ready")
    await sleep(100)
  }
  const elapsed = performance.now() - startedAt
  process.kill(-child.pid!, "SIGTERM")
  await new Promise((resolve) => child.once("exit", resolve))
  return elapsed
}
