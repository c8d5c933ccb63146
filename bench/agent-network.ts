/**
 * `npm run bench:network`: what an agent's network of its own (decision 0043) costs, each against today's sandbox
 * or a direct connection, measured in the same run:
 *
 * - a console command: `sh -c true` in a sandbox that joins the agent's network (as console commands do while its
 *   gateway runs) vs the same sandbox sharing the host's network (before) — goal: ≤ +5 ms;
 * - a sandbox in a network made for it (the connector, routes, slirp4netns: what an agent's first start adds; a
 *   restart keeps its network) vs the same sandbox sharing the host's network — goal: a small part of a gateway's
 *   start (8-9 s), ≤ +10 %;
 * - throughput: 64 MiB read from a server inside the agent's network over a connection Cairn's connector made there
 *   vs from the same server on the host's loopback, directly — goal: ≥ 0.9×.
 *
 * Each pair runs in rounds (Paired.ts), the order rotating; it prints the mean of each side and the median and
 * min–max of the per-round ratios (baseline time over the new time). Needs root, bubblewrap and slirp4netns.
 */
import { OpenClawSandbox } from "@cairn/agent-engine-openclaw"
import { Effect, Scope } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import * as Net from "node:net"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import * as Paired from "./Paired.ts"

const runs = Number(process.env["BENCH_RUNS"] ?? 30)
const home = mkdtempSync(join(tmpdir(), "cairn-bench-network-"))
const dataDir = mkdtempSync(join(tmpdir(), "cairn-bench-network-data-"))
const scope = Effect.runSync(Scope.make())
const make = (networks: "private" | "shared") =>
  Effect.runPromise(Scope.provide(scope)(OpenClawSandbox.make({ mode: "required", dataDir, readOnly: [dirname(process.execPath)], networks })))
const sandbox = await make("private")
if (sandbox.createNetwork === undefined) {
  console.log("agents have no networks of their own here (root, bubblewrap and slirp4netns needed): nothing to measure")
  process.exit(0)
}
// "Before": the same sandbox sharing the host's network (as where a network cannot be made).
const before = await make("shared")

const run = async (network: OpenClawSandbox.NetworkChoice | "shared" | "new"): Promise<void> => {
  if (network === "new") {
    const made = await sandbox.createNetwork!()
    try {
      return await run({ join: made })
    } finally {
      made.close()
    }
  }
  return new Promise<void>((resolve, reject) => {
    const [where, choice] = network === "shared" ? [before, "none" as const] : [sandbox, network]
    const launch = where.launch({ home, cwd: home, argv: ["sh", "-c", "true"], env: { PATH: "/usr/bin:/bin" }, dieWithParent: true, gracefulTerm: false, network: choice })
    const child = OpenClawSandbox.spawnLaunch(launch, "ignore")
    child.on("error", reject)
    child.on("close", (code) => code === 0 ? resolve() : reject(new Error(`exit ${code}`)))
  })
}

// The agent's network, for the whole run, as an agent's lasts.
const network = await sandbox.createNetwork!()

const timed = (operation: () => Promise<unknown>) => () => Effect.promise(async () => void (await operation()))
const show = (label: string, result: Paired.Paired<"before">, unit: (rate: number) => string) =>
  console.log(`${label}: new ${unit(result.rates.measured)}, before ${unit(result.rates["before"])}; ratio ${Paired.show(result.ratios["before"])}`)
const perCall = (rate: number) => `${(1000 / rate).toFixed(1)} ms`

for (let i = 0; i < 3; i++) await Promise.all([run({ join: network }), run("shared"), run("new")])
show("console command joining the agent's network", await Effect.runPromise(Paired.throughput({
  rounds: runs, opsPerBlock: 1, measured: timed(() => run({ join: network })), baselines: { before: timed(() => run("shared")) }
})), perCall)
show("sandbox in a network made for it (an agent's first start's extra)", await Effect.runPromise(Paired.throughput({
  rounds: runs, opsPerBlock: 1, measured: timed(() => run("new")), baselines: { before: timed(() => run("shared")) }
})), perCall)

// Throughput: one server streaming `size` bytes to each connection, inside the agent's network and on the host.
const size = 64 * 1024 * 1024
const serverScript = `const b = Buffer.alloc(1 << 20, 97); require("net").createServer((s) => { let n = ${size / (1 << 20)}; ` +
  `const more = () => { while (n > 0) { n--; if (!s.write(b)) return s.once("drain", more) } s.end() }; more() }).listen(+process.argv[1], "127.0.0.1", () => console.log("up"))`
const startServer = (argv: Array<string>) =>
  new Promise<() => void>((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "pipe", "inherit"] })
    child.stdout.once("data", () => resolve(() => child.kill("SIGKILL")))
  })
const stopInside = await startServer(["nsenter", `--net=${network.path}`, "--", process.execPath, "-e", serverScript, "7001"])
const stopOutside = await startServer([process.execPath, "-e", serverScript, "7002"])
const drain = async (connect: () => Net.Socket | Promise<Net.Socket>) => {
  const connection = await connect()
  await new Promise<void>((resolve, reject) => {
    let received = 0
    connection.on("data", (chunk) => (received += chunk.length))
    connection.on("end", () => received === size ? resolve() : reject(new Error(`read ${received} of ${size}`)))
    connection.on("error", reject)
    connection.resume()
  })
}
const mibPerSecond = (rate: number) => `${((rate * size) / 1024 / 1024).toFixed(0)} MiB/s`
for (let i = 0; i < 2; i++) await Promise.all([drain(() => network.connect(7001)), drain(() => Net.connect(7002, "127.0.0.1"))])
show("64 MiB over a connection into the agent's network vs the host's loopback directly", await Effect.runPromise(Paired.throughput({
  rounds: Math.max(5, Math.round(runs / 3)),
  opsPerBlock: 1,
  measured: timed(() => drain(() => network.connect(7001))),
  baselines: { before: timed(() => drain(() => Net.connect(7002, "127.0.0.1"))) }
})), mibPerSecond)

stopInside()
stopOutside()
network.close()
await Effect.runPromise(Scope.close(scope, { _tag: "Success", value: undefined } as never))
rmSync(home, { recursive: true, force: true })
rmSync(dataDir, { recursive: true, force: true })
process.exit(0)
