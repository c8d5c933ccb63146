/**
 * `npm run bench:upload`: `POST /v3/files` through the real server (`apps/server-node`, its own process, embedded
 * database and IPFS in a temporary directory, simulated engine), this process the client (undici's fetch, the
 * file part first and the fields after it, as the pinata SDK sends them). Paired rounds (Paired.ts): a 99 MiB upload
 * against `openssl dgst -sha256` of the same bytes, as MB/s and their ratio; then blocks of sequential 1 MiB uploads,
 * as requests per second. Each upload's bytes differ (a counter in the first bytes), so no CID is stored twice. The
 * server's CPU time per upload (user + system, from /proc) is printed beside: it is what the server spends, whatever
 * the machine's load does to wall-clock figures.
 */
import { Effect } from "effect"
import { execFile, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync, mkdtempSync, openAsBlob, openSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Paired from "./Paired.ts"

const rounds = Number(process.env["BENCH_ROUNDS"] ?? 5)
const smallPerBlock = Number(process.env["BENCH_SMALL"] ?? 50)
const bigBytes = 99 * 1024 * 1024
const smallBytes = 1024 * 1024
const dataDir = mkdtempSync(join(tmpdir(), "cairn-bench-upload-"))
const port = 41_000 + Math.floor(Math.random() * 1000)
const base = `http://127.0.0.1:${port}`
const mb = (bytes: number) => bytes / 1e6

// The embedded database and IPFS whatever this shell points at.
const env: Record<string, string | undefined> = { ...process.env, PORT: String(port), DATA_DIR: join(dataDir, "data"), ENGINE: "simulated", SANDBOX: "off" }
for (const name of ["DATABASE_URL", "KUBO_API_URL", "KUBO_PUBLIC_API_URL", "KUBO_PRIVATE_API_URL"]) delete env[name]
// BENCH_CPU_PROF=<dir>: the server writes a V8 CPU profile there when it exits (`--cpu-prof` is refused in NODE_OPTIONS).
const cpuProfDir = process.env["BENCH_CPU_PROF"]
const profiling = cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${cpuProfDir}`] : []
// BENCH_SERVER_FLAGS: more node flags for the server (e.g. `--trace-gc`), its stdout then going to BENCH_SERVER_LOG.
const serverFlags = (process.env["BENCH_SERVER_FLAGS"] ?? "").split(" ").filter((flag) => flag !== "")
const serverLog = process.env["BENCH_SERVER_LOG"]
const server = spawn(process.execPath, [...profiling, ...serverFlags, fileURLToPath(new URL("../apps/server-node/src/main.ts", import.meta.url))], {
  env,
  stdio: ["ignore", serverLog ? openSync(serverLog, "w") : "ignore", "inherit"]
})

/** The server's CPU time so far in user space, in milliseconds (Linux; NaN elsewhere). */
const serverUserCpu = () => {
  const stat = `/proc/${server.pid}/stat`
  if (!existsSync(stat)) return Number.NaN
  const fields = readFileSync(stat, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) * 1000) / 100 // utime in clock ticks of 1/100 s
}

/** The server's CPU time so far (user and system), in milliseconds (Linux; NaN elsewhere). */
const serverCpu = () => {
  const stat = `/proc/${server.pid}/stat`
  if (!existsSync(stat)) return Number.NaN
  const fields = readFileSync(stat, "utf8").split(") ")[1]!.split(" ")
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100 // utime, stime in clock ticks of 1/100 s
}

const ready = async () => {
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${base}/readyz`)).status === 200) return
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error("the server did not get ready")
}

const admin = async (path: string, body: unknown) => {
  const token = readFileSync(join(dataDir, "data", "admin-token"), "utf8").trim()
  const response = await fetch(`${base}${path}`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) })
  if (response.status !== 201) throw new Error(`${path}: ${response.status} ${await response.text()}`)
  return ((await response.json()) as { data: Record<string, string> }).data
}

/** A file of `bytes` random bytes whose first 8 bytes are `counter`: new content each time. */
const content = (path: string, random: Buffer, counter: number) => {
  random.writeBigUInt64BE(BigInt(counter), 0)
  writeFileSync(path, random)
  return path
}

const upload = (key: string, path: string, name: string) =>
  Effect.promise(async () => {
    const form = new FormData()
    form.append("file", await openAsBlob(path), name)
    form.append("network", "public")
    const response = await fetch(`${base}/v3/files`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form })
    const text = await response.text()
    if (response.status !== 200) throw new Error(`upload: ${response.status} ${text}`)
  })

const openssl = (path: string) =>
  Effect.promise(() => new Promise<void>((resolve, reject) => execFile("openssl", ["dgst", "-sha256", path], (error) => error ? reject(error) : resolve())))

const program = Effect.gen(function*() {
  yield* Effect.promise(ready)
  const { id: workspaceId } = yield* Effect.promise(() => admin("/admin/workspaces", { name: "bench", plan: "pro" }))
  const { token: key } = yield* Effect.promise(() => admin("/admin/keys", { workspaceId, userId: "bench", scopes: ["org:files:read", "org:files:write"] }))
  const bigRandom = randomBytes(bigBytes)
  const smallRandom = randomBytes(smallBytes)
  const bigPath = join(dataDir, "big.bin")
  const smallPath = join(dataDir, "small.bin")
  let counter = 0

  // Warm-up: the routes' first run, the blockstore's directories.
  yield* upload(key, content(smallPath, smallRandom, counter++), "warm.bin")
  yield* upload(key, content(bigPath, bigRandom, counter++), "warm-big.bin")

  // BENCH_PARTS=small (or big) runs only that half, e.g. for a profile of one of them.
  const parts = (process.env["BENCH_PARTS"] ?? "big,small").split(",")
  if (parts.includes("big")) yield* bigRounds(key, bigPath, bigRandom, () => counter++)
  if (parts.includes("small")) yield* smallBlocks(key, smallPath, smallRandom, () => counter++)
})

const bigRounds = (key: string, bigPath: string, bigRandom: Buffer, next: () => number) =>
  Effect.gen(function*() {
    const bigCpu: Array<number> = []
    const bigUserCpu: Array<number> = []
    const big = yield* Paired.rounds({
      rounds,
      measured: () => Effect.gen(function*() {
        content(bigPath, bigRandom, next())
        const cpu = serverCpu()
        const user = serverUserCpu()
        const block = yield* Paired.timed(mb(bigBytes), upload(key, bigPath, "big.bin"))
        bigCpu.push(serverCpu() - cpu)
        bigUserCpu.push(serverUserCpu() - user)
        return block
      }),
      baselines: { "openssl dgst -sha256": () => Paired.timed(mb(bigBytes), openssl(bigPath)) }
  })
  console.log(`99 MiB upload, ${rounds} paired rounds:`)
  console.log(`  POST /v3/files: ${big.rates.measured} MB/s; openssl dgst -sha256 on the same bytes: ${big.rates["openssl dgst -sha256"]} MB/s`)
  console.log(`  ratio to openssl sha256: ${Paired.show(big.ratios["openssl dgst -sha256"])}`)
  console.log(`  server CPU per upload: ${Paired.spread(bigCpu).median} ms (${Paired.spread(bigCpu).min}–${Paired.spread(bigCpu).max}), of which in user space ${Paired.spread(bigUserCpu).median} ms`)
  })

const smallBlocks = (key: string, smallPath: string, smallRandom: Buffer, next: () => number) =>
  Effect.gen(function*() {
    const smallRates: Array<number> = []
    const smallCpu: Array<number> = []
    for (let round = 0; round < rounds; round++) {
      const cpu = serverCpu()
      const block = yield* Paired.timed(smallPerBlock, Effect.gen(function*() {
        for (let i = 0; i < smallPerBlock; i++) {
          const n = next()
          yield* upload(key, content(smallPath, smallRandom, n), `small-${n}.bin`)
        }
      }))
      smallCpu.push((serverCpu() - cpu) / smallPerBlock)
      smallRates.push((block.operations / block.milliseconds) * 1000)
    }
    const rates = Paired.spread(smallRates)
    const cpus = Paired.spread(smallCpu)
    console.log(`1 MiB uploads, sequential, ${rounds} blocks of ${smallPerBlock}:`)
    console.log(`  ${rates.median.toFixed(0)} req/s (${rates.min.toFixed(0)}–${rates.max.toFixed(0)}); server CPU per upload ${cpus.median.toFixed(1)} ms (${cpus.min.toFixed(1)}–${cpus.max.toFixed(1)})`)
  })

try {
  await Effect.runPromise(program)
} finally {
  server.kill("SIGTERM")
  await new Promise((resolve) => server.once("exit", resolve))
  rmSync(dataDir, { recursive: true, force: true })
}
