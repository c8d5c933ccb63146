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
 * Each route runs paired with its baselines (Paired.ts): BENCH_RUNS (default 30) calls per side in rounds of
 * small blocks (3 calls; uploads: 1), the order rotating, after a few warm-up calls; it prints the mean time per call
 * of each side and the median and min–max of the per-round ratios (raw time over Cairn's time).
 */
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { writeFile } from "node:fs/promises"
import { homedir, tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { OpenClawAgentHome, OpenClawGatewayRpc, OpenClawSandbox } from "@cairn/agent-engine-openclaw"
import { Effect } from "effect"
import { startServer, waitUntilServing } from "@cairn/server-node/testing"
import { benchUser } from "./BenchApi.ts"
import * as Paired from "./Paired.ts"

const runs = Number(process.env["BENCH_RUNS"] ?? 30)
const warmUp = 3
const enginesDir = process.env["OPENCLAW_ENGINES_DIR"] ?? join(homedir(), ".cache", "cairn", "openclaw-engines")
const dataDir = mkdtempSync(join(tmpdir(), "cairn-bench-workspace-"))
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const ms = (value: number) => `${value.toFixed(1)} ms`

/**
 * `runs` calls of Cairn's side and of each baseline, paired in rounds of `perBlock` calls each, after `warmUp`
 * untimed calls of each; the mean milliseconds per call of each side, and the ratios (raw time over Cairn's).
 */
const paired = async <B extends string>(cairn: () => Promise<unknown>, baselines: Record<B, () => Promise<unknown>>, perBlock = 3, count = runs) => {
  for (const operation of [cairn, ...Object.values<() => Promise<unknown>>(baselines)]) {
    for (let i = 0; i < warmUp; i++) await operation()
  }
  const block = (operation: () => Promise<unknown>) => () =>
    Effect.promise(async () => {
      for (let i = 0; i < perBlock; i++) await operation()
    })
  const result = await Effect.runPromise(Paired.throughput({
    rounds: Math.max(1, Math.round(count / perBlock)),
    opsPerBlock: perBlock,
    measured: block(cairn),
    baselines: Object.fromEntries(Object.entries<() => Promise<unknown>>(baselines).map(([name, operation]) => [name, block(operation)])) as Record<B, () => Effect.Effect<void>>
  }))
  const perCall = (rate: number) => 1000 / rate
  return { cairn: perCall(result.rates.measured), raw: (name: B) => perCall(result.rates[name]), ratio: (name: B) => Paired.show(result.ratios[name]) }
}

const server = await startServer({ DATA_DIR: dataDir, ENGINE: undefined, OPENCLAW_ENGINES_DIR: enginesDir, OPENCLAW_BASE_PORT: "24000" })
try {
  await waitUntilServing(server)
  const { call } = benchUser(server, dataDir)
  const { agent } = await call("POST", "/v0/agents", { name: "bench workspace" })
  const agentPath = `/v0/agents/${agent.agentId}`
  const deadline = Date.now() + 300_000
  while ((await call("GET", agentPath)).agent.status !== "running") {
    if (Date.now() > deadline) throw new Error("the agent did not start")
    await sleep(250)
  }
  const home = join(dataDir, "agents", agent.agentId)
  const workspace = OpenClawAgentHome.workspaceDir(home)

  // Console: Cairn's route vs `sh -c true` in a sandbox like the agent's, spawned from here, and (for scale) a plain
  // spawn with no sandbox at all.
  const sandbox = await Effect.runPromise(Effect.scoped(OpenClawSandbox.make({
    mode: "auto",
    dataDir,
    readOnly: [dirname(process.execPath), enginesDir]
  })))
  const console_ = await paired(() => call("POST", `${agentPath}/console/exec`, { command: "true" }), {
    sandboxed: () =>
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
      }),
    bare: () =>
      new Promise<void>((resolve, reject) => {
        const child = spawn("sh", ["-c", "true"], { stdio: "ignore" })
        child.once("error", reject)
        child.once("exit", () => resolve())
      })
  })

  // Config and tasks: Cairn's routes vs the raw RPC on one open connection to the same gateway.
  const { gatewayToken } = await call("GET", `${agentPath}/gateway-token`)
  const port = (JSON.parse(readFileSync(OpenClawAgentHome.configPath(home), "utf8")) as { gateway: { port: number } }).gateway.port
  const rpc = await OpenClawGatewayRpc.connect({ url: `ws://127.0.0.1:${port}`, token: gatewayToken })
  const config = await paired(() => call("GET", `${agentPath}/config`), { rpc: () => rpc.request("config.get", {}) })
  const tasks = await paired(() => call("GET", `${agentPath}/tasks`), { rpc: () => rpc.request("cron.list", {}) })
  rpc.close()

  // Upload: 10 MiB through the route vs fs.writeFile of the same bytes.
  const bytes = new Uint8Array(10 * 1024 * 1024).map((_, i) => (i * 31) & 0xff)
  const contentBase64 = Buffer.from(bytes).toString("base64")
  const uploadRuns = Math.max(5, Math.floor(runs / 3))
  const rawDir = mkdtempSync(join(tmpdir(), "cairn-bench-raw-"))
  const upload = await paired(() => call("POST", `${agentPath}/files/upload`, { filename: "bench.bin", contentBase64 }), {
    write: () => writeFile(join(rawDir, "bench.bin"), bytes)
  }, 1, uploadRuns)
  rmSync(rawDir, { recursive: true, force: true })

  console.log(`\nOpenClaw ${agent.engineVersion}, sandbox ${sandbox.state._tag}, ${runs} calls per side in paired rounds (upload ${uploadRuns}); mean per call, ratio raw/Cairn median (min–max):`)
  console.log(`  console exec over HTTP:         ${ms(console_.cairn)}`)
  console.log(`  raw sh -c true in the sandbox:   ${ms(console_.raw("sandboxed"))}   (bare spawn, no sandbox: ${ms(console_.raw("bare"))})`)
  const over = console_.cairn - console_.raw("sandboxed")
  console.log(`  Cairn's cost over raw:           ${over < 0 ? "-" : "+"}${ms(Math.abs(over))}   (goal ≤ +30 ms); ratio ${console_.ratio("sandboxed")}`)
  console.log(`  GET config over HTTP:            ${ms(config.cairn)}   raw config.get: ${ms(config.raw("rpc"))}   ratio raw/Cairn ${config.ratio("rpc")} (goal ≥ 0.8x)`)
  console.log(`  GET tasks over HTTP:             ${ms(tasks.cairn)}   raw cron.list:  ${ms(tasks.raw("rpc"))}   ratio raw/Cairn ${tasks.ratio("rpc")} (goal ≥ 0.8x)`)
  console.log(`  upload 10 MiB over HTTP:         ${ms(upload.cairn)}   raw fs.writeFile: ${ms(upload.raw("write"))}   ratio raw/Cairn ${upload.ratio("write")} (goal ≥ 0.5x)`)
  await call("DELETE", agentPath)
} finally {
  if (server.child.exitCode === null) server.child.kill("SIGTERM")
  await server.exited
  rmSync(dataDir, { recursive: true, force: true })
}
