/**
 * `npm run bench:cli`: wall time of the admin CLI's common commands, each a process of its own as a shell runs it
 * (`./cairn …`, the CLI from its bundle), beside a raw `node -e ''` started and timed the same way in the same rounds
 * (the order rotates from round to round, so load on the machine falls on all alike), and the same commands from the
 * sources (`CAIRN_BUNDLE=off`, as before the bundle) and through `npm run -s cli --` (npm's own start included).
 *
 * Against a real server (simulated engine, a temporary data directory): `workspace create`, `key create`, `audit
 * --agent` of an agent made through the API, and `--help`. Each prints min / median / max of the times in ms and of
 * the per-round ratios command / `node -e ''`. The CLI's bundle is built first (apps/server-node/src/Bundle.ts,
 * target `cli`) when it is not current. `BENCH_CLI_ROUNDS` rounds (7).
 */
import * as Bundle from "@cairn/server-node/Bundle"
import { build } from "@cairn/server-node/BundleBuild"
import { startServer, waitUntilServing } from "@cairn/server-node/testing"
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const rounds = Number(process.env["BENCH_CLI_ROUNDS"] ?? 7)
const root = fileURLToPath(new URL("..", import.meta.url))
const dataDir = mkdtempSync(join(tmpdir(), "cairn-bench-cli-"))

if (Bundle.fresh(Bundle.cli) === undefined) {
  process.stdout.write("building the CLI's bundle… ")
  await build(Bundle.directory(Bundle.cli), Bundle.cli)
  console.log("done")
}

const server = await startServer({ DATA_DIR: dataDir, ENGINE: "simulated", SIMULATED_START_DELAY: "100 millis" })
const env = { ...process.env, CAIRN_URL: server.url, DATA_DIR: dataDir }

/** Runs one command to its end; its wall time in ms, and its output (a failure stops the bench). */
const run = (command: string, args: ReadonlyArray<string>, extra: Record<string, string> = {}) => {
  const started = process.hrtime.bigint()
  const result = spawnSync(command, args, { cwd: root, env: { ...env, ...extra }, encoding: "utf8" })
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${result.status}:\n${result.stderr}`)
  return { ms, stdout: result.stdout }
}

const node = join(root, "node_modules/.bin/node")
const cairn = join(root, "cairn")
const lastLine = (text: string) => text.trim().split("\n").at(-1)!

try {
  await waitUntilServing(server, 180_000)
  const workspace = lastLine(run(cairn, ["workspace", "create", "--name", "Bench", "--plan", "pro"]).stdout)
  const key = lastLine(run(cairn, ["key", "create", "--workspace", workspace, "--user", "ada", "--scopes", "org:agents"]).stdout)
  const created = await fetch(`${server.url}/v0/agents`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "bench" })
  })
  const agentId = ((await created.json()) as { agent: { agentId: string } }).agent.agentId

  const commands: Record<string, ReadonlyArray<string>> = {
    "workspace create": ["workspace", "create", "--name", "Bench"],
    "key create": ["key", "create", "--workspace", workspace, "--user", "ada", "--scopes", "org:files:read"],
    "audit --agent": ["audit", "--agent", agentId],
    "--help": ["--help"]
  }
  const ways: Record<string, (args: ReadonlyArray<string>) => number> = {
    "./cairn (bundle)": (args) => run(cairn, args).ms,
    "sources": (args) => run(node, [join(root, "apps/cli/src/start.mjs"), ...args], { CAIRN_BUNDLE: "off" }).ms,
    "npm run -s cli (bundle)": (args) => run("npm", ["run", "-s", "cli", "--", ...args]).ms
  }
  const baseline = () => run(node, ["-e", ""]).ms

  const times = new Map<string, Array<number>>()
  const ratios = new Map<string, Array<number>>()
  const record = (map: Map<string, Array<number>>, name: string, value: number) => map.set(name, [...(map.get(name) ?? []), value])
  const cases = Object.entries(commands).flatMap(([command, args]) =>
    Object.entries(ways).map(([way, runWay]) => ({ name: `${command} · ${way}`, go: () => runWay(args) }))
  )
  for (let round = 0; round < rounds; round++) {
    // Each case paired with a baseline run right before it; the cases' order rotates.
    const order = [...cases.slice(round % cases.length), ...cases.slice(0, round % cases.length)]
    for (const { name, go } of order) {
      const base = baseline()
      record(times, "node -e ''", base)
      const ms = go()
      record(times, name, ms)
      record(ratios, name, ms / base)
    }
  }

  const spread = (values: ReadonlyArray<number>) => {
    const sorted = [...values].sort((a, b) => a - b)
    return { min: sorted[0]!, median: sorted[Math.floor(sorted.length / 2)]!, max: sorted.at(-1)! }
  }
  const load = (await import("node:os")).loadavg().map((l) => l.toFixed(1)).join(" ")
  console.log(`admin CLI, ${rounds} rounds, load average ${load} (ms: median (min–max); ratio to node -e '' in the same round)`)
  const base = spread(times.get("node -e ''")!)
  console.log(`  node -e ''`.padEnd(52) + `${base.median.toFixed(0)} ms (${base.min.toFixed(0)}–${base.max.toFixed(0)})`)
  for (const { name } of cases) {
    const t = spread(times.get(name)!)
    const r = spread(ratios.get(name)!)
    console.log(
      `  ${name}`.padEnd(52) +
        `${t.median.toFixed(0)} ms (${t.min.toFixed(0)}–${t.max.toFixed(0)})`.padEnd(24) +
        `${r.median.toFixed(1)}x (${r.min.toFixed(1)}–${r.max.toFixed(1)})`
    )
  }
} finally {
  server.child.kill("SIGTERM")
  await server.exited
  rmSync(dataDir, { recursive: true, force: true })
}
