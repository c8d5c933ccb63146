/**
 * `npm run bench:workspace`: the workspace routes of issue 13 on a real Cairn server with a real OpenClaw gateway,
 * each against a raw baseline measured in the same run:
 *
 * - console: `POST /v0/agents/{id}/console/exec {command:"true"}` round trip vs spawning `sh -c true` directly in
 *   the same sandbox (bubblewrap, same home, same limits) from this process: the difference is Cairn's cost
 *   (goal ≤ +30 ms);
 * - config and tasks: `GET /v0/agents/{id}/config` and `GET …/tasks` p50 vs the raw RPC call (`config.get`,
 *   `cron.list`) on one open WebSocket connection to the same gateway (goal ≥ 0.8×, raw time over Cairn time);
 * - upload: `POST …/files/upload` of a 10 MiB file vs `fs.writeFile` of the same bytes (goal ≥ 0.5×, raw time over
 *   Cairn time).
 *
 * BENCH_RUNS (default 30) requests each, after a few warm-up ones; medians.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { writeFile } from "node:fs/promises"
import { homedir, tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { OpenClawAgentHome, OpenClawGatewayRpc, OpenClawSandbox } from "@cairn/agent-engine-openclaw"
import { Effect } from "effect"
import { newApiUser, startServer, waitUntilServing } from "@cairn/server-node/testing"

const runs = Number(process.env["BENCH_RUNS"] ?? 30)
const warmUp = 3
const enginesDir = process.env["OPENCLAW_ENGINES_DIR"] ?? join(homedir(), ".cache", "cairn", "openclaw-engines")
const dataDir = mkdtempSync(join(tmpdir(), "cairn-bench-workspace-"))
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const ms = (value: number) => `${value.toFixed(1)} ms`

/** The median wall time of `runs` calls of `operation`, after `warmUp` untimed ones. */
const timed = async (operation: () => Promise<unknown>, count = runs) => {
  for (let i = 0; i < warmUp; i++) await operation()
  const times: Array<number> = []
  for (let i = 0; i < count; i++) {
    const startedAt = performance.now()
    await operation()
    times.push(performance.now() - startedAt)
  }
  return median(times)
}

const server = await startServer({ DATA_DIR: dataDir, ENGINE: undefined, OPENCLAW_ENGINES_DIR: enginesDir, OPENCLAW_BASE_PORT: "24000" })
try {
  await waitUntilServing(server)
  const api = newApiUser({ url: server.url, dataDir }, { workspace: "bench", agentLimit: 1, scopes: "org:agents" })
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await api.call(method, path, body)
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(response.body)}`)
    return response.body
  }
  const { agent } = await call("POST", "/v0/agents", { name: "bench workspace" })
  const agentPath = `/v0/agents/${agent.agentId}`
  const deadline = Date.now() + 300_000
  while ((await call("GET", agentPath)).agent.status !== "running") {
    if (Date.now() > deadline) throw new Error("the agent did not start")
    await sleep(250)
  }
  const home = join(dataDir, "agents", agent.agentId)
  const workspace = OpenClawAgentHome.workspaceDir(home)

  // Console: Cairn's route vs `sh -c true` in a sandbox like the agent's, spawned from here.
  const consoleCairn = await timed(() => call("POST", `${agentPath}/console/exec`, { command: "true" }))
  const sandbox = await Effect.runPromise(OpenClawSandbox.make({
    mode: "auto",
    dataDir,
    readOnly: [dirname(process.execPath), enginesDir]
  }))
  const consoleRaw = await timed(() =>
    new Promise<void>((resolve, reject) => {
      const launch = sandbox.launch({
        home,
        cwd: workspace,
        argv: ["sh", "-c", "true"],
        env: { PATH: "/usr/bin:/bin" },
        dieWithParent: true,
        gracefulTerm: false
      })
      const child = OpenClawSandbox.spawnLaunch(launch, "ignore")
      child.once("error", reject)
      child.once("exit", () => resolve())
    })
  )
  // A plain spawn with no sandbox at all, for scale.
  const consoleBare = await timed(() =>
    new Promise<void>((resolve, reject) => {
      const child = spawn("sh", ["-c", "true"], { stdio: "ignore" })
      child.once("error", reject)
      child.once("exit", () => resolve())
    })
  )

  // Config and tasks: Cairn's routes vs the raw RPC on one open connection to the same gateway.
  const { gatewayToken } = await call("GET", `${agentPath}/gateway-token`)
  const port = (JSON.parse(readFileSync(OpenClawAgentHome.configPath(home), "utf8")) as { gateway: { port: number } }).gateway.port
  const rpc = await OpenClawGatewayRpc.connect({ url: `ws://127.0.0.1:${port}`, token: gatewayToken })
  const configCairn = await timed(() => call("GET", `${agentPath}/config`))
  const configRaw = await timed(() => rpc.request("config.get", {}))
  const tasksCairn = await timed(() => call("GET", `${agentPath}/tasks`))
  const tasksRaw = await timed(() => rpc.request("cron.list", {}))
  rpc.close()

  // Upload: 10 MiB through the route vs fs.writeFile of the same bytes.
  const bytes = new Uint8Array(10 * 1024 * 1024).map((_, i) => (i * 31) & 0xff)
  const contentBase64 = Buffer.from(bytes).toString("base64")
  const uploadRuns = Math.max(5, Math.floor(runs / 3))
  const uploadCairn = await timed(() => call("POST", `${agentPath}/files/upload`, { filename: "bench.bin", contentBase64 }), uploadRuns)
  const rawDir = mkdtempSync(join(tmpdir(), "cairn-bench-raw-"))
  const uploadRaw = await timed(() => writeFile(join(rawDir, "bench.bin"), bytes), uploadRuns)
  rmSync(rawDir, { recursive: true, force: true })

  console.log(`\nOpenClaw ${agent.engineVersion}, sandbox ${sandbox.state._tag}, medians of ${runs} (upload ${uploadRuns}):`)
  console.log(`  console exec over HTTP:         ${ms(consoleCairn)}`)
  console.log(`  raw sh -c true in the sandbox:   ${ms(consoleRaw)}   (bare spawn, no sandbox: ${ms(consoleBare)})`)
  console.log(`  Cairn's cost over raw:           +${ms(consoleCairn - consoleRaw)}   (goal ≤ +30 ms)`)
  console.log(`  GET config over HTTP:            ${ms(configCairn)}   raw config.get: ${ms(configRaw)}   ratio raw/Cairn ${(configRaw / configCairn).toFixed(2)}x (goal ≥ 0.8x)`)
  console.log(`  GET tasks over HTTP:             ${ms(tasksCairn)}   raw cron.list:  ${ms(tasksRaw)}   ratio raw/Cairn ${(tasksRaw / tasksCairn).toFixed(2)}x (goal ≥ 0.8x)`)
  console.log(`  upload 10 MiB over HTTP:         ${ms(uploadCairn)}   raw fs.writeFile: ${ms(uploadRaw)}   ratio raw/Cairn ${(uploadRaw / uploadCairn).toFixed(2)}x (goal ≥ 0.5x)`)
  await call("DELETE", agentPath)
} finally {
  if (server.child.exitCode === null) server.child.kill("SIGTERM")
  await server.exited
  rmSync(dataDir, { recursive: true, force: true })
}
