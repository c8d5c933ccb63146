/**
 * `npm run bench:startup`: time from starting the real Node server (`apps/server-node/src/start.mjs`, as `npm start`
 * runs it, the default engine included) to its first `200` on `/readyz`, beside raw baselines started and timed the
 * same way in the same rounds (the order rotates from round to round, so load on the machine falls on all alike):
 *
 *   warm      the embedded database (PGlite) and IPFS in a data directory a previous start initialised
 *             baselines: `node -e` answering 200 over node:http, and PGlite opening the same data directory alone
 *             (then `SELECT 1`, then answering 200)
 *   fresh     an empty data directory each time (its database copied from the template an earlier start kept in
 *             PGLITE_TEMPLATE_DIR)
 *   first     an empty data directory and no template yet: the first start on a machine
 *             baselines (both): node:http, and PGlite initialising an empty directory alone
 *   postgres  with DATABASE_URL set (a fresh data directory for the keys each time; the database migrated by a
 *             first start)
 *             baselines: node:http, and `SELECT 1` through the same driver (@effect/sql-pg) before answering 200
 *
 * The server runs from its bundle (apps/server-node/src/Bundle.ts; built here first, and again before a start if a
 * source changed meanwhile), and beside it from the sources (`CAIRN_BUNDLE=off`) as one more baseline of the embedded
 * cases: "server / server, sources" is the bundle's own gain.
 *
 * Each case prints min / median / max of the times, and of the per-round ratios server time / baseline time (lower
 * is better), and the CPU time each process had used when it answered, all threads and its main thread alone (user +
 * system, from /proc: a loaded machine stretches the times far more than these; the main thread's is the start's
 * critical path when the database opens in a worker). `BENCH_STARTS` rounds (5), `BENCH_CASES` (warm,fresh,first,postgres: those to run).
 */
import { freePort } from "@cairn/server-node/testing"
import * as Bundle from "@cairn/server-node/Bundle"
import { build } from "@cairn/server-node/BundleBuild"
import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Paired from "./Paired.ts"

const rounds = Number(process.env["BENCH_STARTS"] ?? 5)
const cases = (process.env["BENCH_CASES"] ?? "warm,fresh,first,postgres").split(",")
const databaseUrl = process.env["DATABASE_URL"]
const root = fileURLToPath(new URL("..", import.meta.url))
// `npm start`'s entry point.
const main = join(root, "apps/server-node/src/start.mjs")
const scratch = mkdtempSync(join(tmpdir(), "cairn-bench-startup-"))
let dirs = 0
const newDir = () => join(scratch, `d${dirs++}`)

/** A process to start: its arguments after `node`, and its environment beside PORT and HOST. */
interface Start {
  readonly args: ReadonlyArray<string>
  readonly env: Record<string, string | undefined>
  /** Runs before the process is started and timed. */
  readonly before?: () => Promise<unknown>
}

const serving = (body: string) => `import { createServer } from "node:http"
${body}
createServer((_, res) => res.end("ok")).listen(Number(process.env.PORT), "127.0.0.1")`

const nodeHttp: Start = { args: ["--input-type=module", "-e", serving("")], env: {} }

const pgliteAlone = (dataDir: string): Start => ({
  args: ["--input-type=module", "-e", serving(`import { PGlite } from "@electric-sql/pglite"
const db = await PGlite.create(process.env.PG_DIR)
await db.query("SELECT 1")`)],
  env: { PG_DIR: dataDir }
})

const sqlPgAlone: Start = {
  args: ["--input-type=module", "-e", serving(`import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
await Effect.runPromise(SqlClient.SqlClient.use((sql) => sql\`SELECT 1\`).pipe(
  Effect.provide(PgClient.layer({ url: Redacted.make(process.env.DATABASE_URL) })), Effect.scoped))`)],
  env: { DATABASE_URL: databaseUrl }
}

/** The server's bundle is current (a source changed since it was built, another engineer's edit say, rebuilds it). */
const bundleCurrent = async () => Bundle.fresh() ?? build(Bundle.directory())

const server = (dataDir: string, env: Record<string, string | undefined> = {}): Start => ({
  args: [main],
  env: { DATA_DIR: dataDir, DATABASE_URL: undefined, CAIRN_BUNDLE: "on", ...env },
  before: bundleCurrent
})

/** The server from the sources: as before the bundle. */
const fromSources = (dataDir: string, env: Record<string, string | undefined> = {}): Start => ({
  args: [main],
  env: { DATA_DIR: dataDir, DATABASE_URL: undefined, CAIRN_BUNDLE: "off", ...env }
})

/**
 * CPU milliseconds (user + system) a process has used, or only its main thread (`/proc/<pid>/task/<pid>`: the
 * worker and V8's background threads left out), from /proc; NaN where there is none (not Linux).
 */
const cpuMs = (pid: number | undefined, mainThread = false): number => {
  try {
    const stat = readFileSync(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, "utf8")
    // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th, in ticks of 10 ms.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return NaN
  }
}

interface Ready {
  /** Milliseconds from spawning to the first 200 on /readyz. */
  readonly ms: number
  /** The CPU milliseconds the process had used by then, and its main thread. */
  readonly cpu: number
  readonly mainThreadCpu: number
}

/** Starts `start` and times it to its first 200 on /readyz; the process is stopped (SIGTERM) after. */
const timeToReady = async (start: Start): Promise<Ready> => {
  await start.before?.()
  const port = await freePort()
  const env: Record<string, string | undefined> = { ...process.env, ...start.env, PORT: String(port), HOST: "127.0.0.1" }
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key]
  let output = ""
  const started = performance.now()
  const child: ChildProcess = spawn(process.execPath, [...start.args], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] })
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  const exited = once(child, "exit")
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`exited before it was ready:\n${output}`)
      const status = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) }).then(
        (response) => response.status,
        () => 0
      )
      if (status === 200) return { ms: performance.now() - started, cpu: cpuMs(child.pid), mainThreadCpu: cpuMs(child.pid, true) }
      if (performance.now() - started > 120_000) throw new Error(`not ready after 120 s:\n${output}`)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  } finally {
    child.kill("SIGTERM")
    await exited
  }
}

/**
 * `rounds` rounds of the server and its baselines, in an order that rotates; `prepare` gives each round's starts (a
 * fresh directory, say).
 */
const measure = async <B extends string>(name: string, prepare: () => { server: Start; baselines: Record<B, Start> }) => {
  const times: Record<string, Array<number>> = {}
  const cpu: Record<string, Array<number>> = {}
  const mainThreadCpu: Record<string, Array<number>> = {}
  const ratios: Record<string, Array<number>> = {}
  for (let round = 0; round < rounds; round++) {
    const { server, baselines } = prepare()
    const sides: Array<[string, Start]> = [["server", server], ...Object.entries<Start>(baselines)]
    const round_: Record<string, number> = {}
    for (let k = 0; k < sides.length; k++) {
      const [side, start] = sides[(round + k) % sides.length]!
      const ready = await timeToReady(start)
      round_[side] = ready.ms
      ;(times[side] ??= []).push(ready.ms)
      ;(cpu[side] ??= []).push(ready.cpu)
      ;(mainThreadCpu[side] ??= []).push(ready.mainThreadCpu)
    }
    for (const side of Object.keys(baselines)) (ratios[side] ??= []).push(round_["server"]! / round_[side]!)
  }
  const ms = (values: ReadonlyArray<number>) => {
    const s = Paired.spread(values)
    return `${s.median.toFixed(0)} ms (${s.min.toFixed(0)}–${s.max.toFixed(0)})`
  }
  console.log(`\n${name}: time to the first 200 on /readyz, median (min–max) of ${rounds}`)
  for (const [side, values] of Object.entries(times)) {
    console.log(`  ${side.padEnd(22)} ${ms(values)}, CPU ${ms(cpu[side]!)}, main thread ${ms(mainThreadCpu[side]!)}`)
  }
  for (const [side, values] of Object.entries(ratios)) {
    console.log(`  server / ${side.padEnd(13)} ${Paired.show(Paired.spread(values))}`)
  }
}

const loadAverage = () => {
  try {
    return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")
  } catch {
    return "unknown"
  }
}

console.log(`load average at the start: ${loadAverage()}`)
try {
  if (cases.includes("warm")) {
    const dataDir = newDir()
    await timeToReady(server(dataDir)) // initialises it
    await measure("warm embedded data dir", () => ({
      server: server(dataDir),
      baselines: { "node:http": nodeHttp, "PGlite alone": pgliteAlone(join(dataDir, "pg")), "server, sources": fromSources(dataDir) }
    }))
  }
  if (cases.includes("fresh")) {
    await timeToReady(server(newDir())) // keeps the template, if this machine has none
    await measure("fresh embedded data dir", () => ({
      server: server(newDir()),
      baselines: { "node:http": nodeHttp, "PGlite alone": pgliteAlone(newDir()), "server, sources": fromSources(newDir()) }
    }))
  }
  if (cases.includes("first")) {
    await measure("first start on a machine (no PGlite template)", () => ({
      server: server(newDir(), { PGLITE_TEMPLATE_DIR: newDir() }),
      baselines: { "node:http": nodeHttp, "PGlite alone": pgliteAlone(newDir()), "server, sources": fromSources(newDir(), { PGLITE_TEMPLATE_DIR: newDir() }) }
    }))
  }
  if (cases.includes("postgres")) {
    if (databaseUrl === undefined) console.log("\npostgres: skipped (DATABASE_URL is not set)")
    else {
      await timeToReady(server(newDir(), { DATABASE_URL: databaseUrl })) // migrates the database
      await measure("Postgres (DATABASE_URL)", () => ({
        server: server(newDir(), { DATABASE_URL: databaseUrl }),
        baselines: { "node:http": nodeHttp, "sql-pg SELECT 1": sqlPgAlone, "server, sources": fromSources(newDir(), { DATABASE_URL: databaseUrl }) }
      }))
    }
  }
  console.log(`\nload average at the end: ${loadAverage()}`)
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
