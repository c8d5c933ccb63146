/**
 * `npm run bench:upload`: `POST /v3/files` through the real server (`apps/server-node`, its own process, embedded
 * database and IPFS in a temporary directory, simulated engine), this process the client (the file part first and
 * the fields after it, as the pinata SDK sends them). Paired rounds (Paired.ts): a 99 MiB upload against
 * `openssl dgst -sha256` of the same bytes and against a bare `node:http` server (its own process) that reads and
 * drops the same request, as MB/s and ratios; then blocks of sequential 1 MiB uploads, as requests per second. The
 * 99 MiB body is sent by `node:http` from the bytes in memory in 1 MiB writes (`BENCH_CLIENT=fetch`: undici's fetch
 * of a `FormData` of `openAsBlob`, which alone held the bare server under 0.4x openssl); the 1 MiB uploads are
 * sent the same way, in blocks paired with blocks to the bare server (`BENCH_SMALL_CLIENT=fetch`: fetch, which alone
 * held the bare server to ~130 req/s). Each upload's bytes differ (a counter in each 1 MiB leaf), so no block is stored twice. The
 * server's CPU time per upload (user + system, from /proc) is printed beside: it is what the server spends, whatever
 * the machine's load does to wall-clock figures.
 */
import { Effect } from "effect"
import { execFile, spawn } from "node:child_process"
import * as http from "node:http"
import { randomBytes } from "node:crypto"
import { closeSync, existsSync, mkdtempSync, openAsBlob, openSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs"
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

/**
 * Makes `random` new content: `counter` in the first 8 bytes of each 1 MiB leaf, so no block of any upload is one the
 * store already holds (a stored block would be replaced, and freeing the old one's disk blocks is a synchronous
 * discard on a filesystem mounted with `discard`: ~1.3 ms per leaf here, which the bench measured as the server's).
 */
const renew = (random: Buffer, counter: number) => {
  for (let at = 0; at + 8 <= random.byteLength; at += smallBytes) random.writeBigUInt64BE(BigInt(counter), at)
}

/** A file of random bytes made new by `counter` (`renew`). */
const content = (path: string, random: Buffer, counter: number) => {
  renew(random, counter)
  writeFileSync(path, random)
  return path
}

const upload = (key: string, path: string, name: string, url = `${base}/v3/files`) =>
  Effect.promise(async () => {
    const form = new FormData()
    form.append("file", await openAsBlob(path), name)
    form.append("network", "public")
    const response = await fetch(url, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form })
    const text = await response.text()
    if (response.status !== 200) throw new Error(`upload: ${response.status} ${text}`)
  })

// The bare baseline: a node:http server that reads a request's body, drops it, and answers 200.
// It listens on a port of the system's choosing and prints it.
const bare = spawn(process.execPath, ["-e", `const server = require("node:http").createServer((q, s) => { q.on("data", () => {}); q.on("end", () => s.end("{}")) }); server.listen(0, "127.0.0.1", () => console.log(server.address().port))`], { stdio: ["ignore", "pipe", "inherit"] })
const barePort = new Promise<number>((resolve, reject) => {
  bare.stdout.once("data", (line: Buffer) => resolve(Number(line.toString().trim())))
  bare.once("exit", (code, signal) => reject(new Error(`the bare server stopped (${signal ?? code})`)))
})
barePort.catch(() => {}) // reported where it is awaited

const bigClient = process.env["BENCH_CLIENT"] ?? "http"
const agent = new http.Agent({ keepAlive: true })

/**
 * A multipart body of one `file` part and the `network` field (in the SDK's order), posted by node:http from `bytes`
 * in memory in 1 MiB writes: a client that costs little beside the server it measures.
 */
const postBytes = (url: string, key: string, bytes: Buffer, name: string) =>
  Effect.promise(() => new Promise<void>((resolve, reject) => {
    const boundary = `----cairn-bench-${Math.random().toString(16).slice(2)}`
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`)
    const tail = Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="network"\r\n\r\npublic\r\n--${boundary}--\r\n`)
    const request = http.request(url, {
      method: "POST",
      agent,
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": `multipart/form-data; boundary=${boundary}`,
        "content-length": head.byteLength + bytes.byteLength + tail.byteLength
      }
    }, (response) => {
      const body: Array<Buffer> = []
      response.on("data", (piece: Buffer) => body.push(piece))
      response.on("end", () => response.statusCode === 200 ? resolve() : reject(new Error(`upload: ${response.statusCode} ${Buffer.concat(body).toString()}`)))
    })
    request.on("error", reject)
    request.write(head)
    let at = 0
    const pump = () => {
      while (at < bytes.byteLength) {
        const end = Math.min(at + 1024 * 1024, bytes.byteLength)
        const more = request.write(bytes.subarray(at, end))
        at = end
        if (!more) return void request.once("drain", pump)
      }
      request.end(tail)
    }
    pump()
  }))

/** One upload to `url` (the server's, or the bare one's) by `client`: fetch of the file at `path`, or `bytes` by node:http. */
const post = (client: string, url: string, key: string, path: string, bytes: Buffer, name: string) =>
  client === "fetch" ? upload(key, path, name, url) : postBytes(url, key, bytes, name)

/** The 99 MiB upload to `url`, by the client `BENCH_CLIENT` names. */
const uploadBig = (url: string, key: string, path: string, bytes: Buffer) => post(bigClient, url, key, path, bytes, "big.bin")

const openssl = (path: string) =>
  Effect.promise(() => new Promise<void>((resolve, reject) => execFile("openssl", ["dgst", "-sha256", path], (error) => error ? reject(error) : resolve())))

/**
 * Writes and deletes a scratch file as large as what the bench's uploads will write, so the page cache they fill
 * takes pages the machine has used before. On a VM whose memory the host backs on first touch, writing to a page
 * the guest never used costs ~2 ms of kernel time per MiB (measured here: 100 MiB of new files 200–230 ms of system
 * time, against 35–90 ms into pages freed a moment before); a server that has run a while, or bare metal, does not
 * pay it, and without this the bench charged it to the server. `BENCH_PREFAULT=0` skips it.
 */
const prefaultPageCache = (bytes: number) => {
  if (process.env["BENCH_PREFAULT"] === "0") return
  const scratch = join(dataDir, "prefault.bin")
  const piece = Buffer.alloc(smallBytes, 1)
  const fd = openSync(scratch, "w")
  try {
    for (let written = 0; written < bytes; written += piece.byteLength) writeSync(fd, piece)
  } finally {
    closeSync(fd)
    rmSync(scratch)
  }
}

const program = Effect.gen(function*() {
  yield* Effect.promise(ready)
  // What the uploads below write: the 99 MiB rounds and the 1 MiB blocks, with room for the warm-up.
  prefaultPageCache(bigBytes * (rounds + 3) + smallBytes * (smallPerBlock * rounds + 8))
  const { id: workspaceId } = yield* Effect.promise(() => admin("/admin/workspaces", { name: "bench", plan: "pro" }))
  const { token: key } = yield* Effect.promise(() => admin("/admin/keys", { workspaceId, userId: "bench", scopes: ["org:files:read", "org:files:write"] }))
  const bigRandom = randomBytes(bigBytes)
  const smallRandom = randomBytes(smallBytes)
  const bigPath = join(dataDir, "big.bin")
  const smallPath = join(dataDir, "small.bin")
  let counter = 0

  // Warm-up: the routes' first run, the blockstore's directories.
  yield* upload(key, content(smallPath, smallRandom, counter++), "warm.bin")
  yield* uploadBig(`${base}/v3/files`, key, content(bigPath, bigRandom, counter++), bigRandom)
  const bareUrl = `http://127.0.0.1:${yield* Effect.promise(() => barePort)}/`
  yield* uploadBig(bareUrl, key, bigPath, bigRandom)

  // BENCH_PARTS=small (or big) runs only that half, e.g. for a profile of one of them.
  const parts = (process.env["BENCH_PARTS"] ?? "big,small").split(",")
  if (parts.includes("big")) yield* bigRounds(key, bigPath, bigRandom, bareUrl, () => counter++)
  if (parts.includes("small")) yield* smallBlocks(key, smallPath, smallRandom, bareUrl, () => counter++)
})

const bigRounds = (key: string, bigPath: string, bigRandom: Buffer, bareUrl: string, next: () => number) =>
  Effect.gen(function*() {
    const bigCpu: Array<number> = []
    const bigUserCpu: Array<number> = []
    const bareRates: Array<number> = []
    const opensslRates: Array<number> = []
    const rate = <E, R>(rates: Array<number>, block: Effect.Effect<Paired.Block, E, R>) =>
      Effect.map(block, (done) => {
        rates.push(done.operations / done.milliseconds)
        return done
      })
    const big = yield* Paired.rounds({
      rounds,
      measured: () => Effect.gen(function*() {
        content(bigPath, bigRandom, next())
        const cpu = serverCpu()
        const user = serverUserCpu()
        const block = yield* Paired.timed(mb(bigBytes), uploadBig(`${base}/v3/files`, key, bigPath, bigRandom))
        bigCpu.push(serverCpu() - cpu)
        bigUserCpu.push(serverUserCpu() - user)
        return block
      }),
      baselines: {
        "openssl dgst -sha256": () => rate(opensslRates, Paired.timed(mb(bigBytes), openssl(bigPath))),
        "bare node:http": () => rate(bareRates, Paired.timed(mb(bigBytes), uploadBig(bareUrl, key, bigPath, bigRandom)))
      }
  })
  console.log(`99 MiB upload (client: ${bigClient === "fetch" ? "fetch, FormData of openAsBlob" : "node:http from memory, 1 MiB writes"}), ${rounds} paired rounds:`)
  console.log(`  POST /v3/files: ${big.rates.measured} MB/s; openssl dgst -sha256 on the same bytes: ${big.rates["openssl dgst -sha256"]} MB/s; a bare node:http server dropping the body: ${big.rates["bare node:http"]} MB/s`)
  console.log(`  ratio to openssl sha256: ${Paired.show(big.ratios["openssl dgst -sha256"])}; to the bare server: ${Paired.show(big.ratios["bare node:http"])}`)
  console.log(`  the bare server's ratio to openssl sha256 (the client's ceiling): ${Paired.show(Paired.spread(bareRates.map((r, i) => r / opensslRates[i]!)))}`)
  console.log(`  server CPU per upload: ${Paired.spread(bigCpu).median} ms (${Paired.spread(bigCpu).min}–${Paired.spread(bigCpu).max}), of which in user space ${Paired.spread(bigUserCpu).median} ms`)
  })

/** Which client sends the 1 MiB uploads: node:http from memory, as the 99 MiB one, or `BENCH_SMALL_CLIENT=fetch`. */
const smallClient = process.env["BENCH_SMALL_CLIENT"] ?? "http"

const smallBlocks = (key: string, smallPath: string, smallRandom: Buffer, bareUrl: string, next: () => number) =>
  Effect.gen(function*() {
    const smallCpu: Array<number> = []
    const uploads = (url: string) => Effect.gen(function*() {
      for (let i = 0; i < smallPerBlock; i++) {
        const n = next()
        // fetch reads the file, so it is rewritten; node:http sends the bytes, so only they change.
        if (smallClient === "fetch") content(smallPath, smallRandom, n)
        else renew(smallRandom, n)
        yield* post(smallClient, url, key, smallPath, smallRandom, `small-${n}.bin`)
      }
    })
    const small = yield* Paired.rounds({
      rounds,
      measured: () => Effect.gen(function*() {
        const cpu = serverCpu()
        const block = yield* Paired.timed(smallPerBlock, uploads(`${base}/v3/files`))
        smallCpu.push((serverCpu() - cpu) / smallPerBlock)
        return block
      }),
      baselines: { "bare node:http": () => Paired.timed(smallPerBlock, uploads(bareUrl)) }
    })
    const cpus = Paired.spread(smallCpu)
    const client = smallClient === "fetch" ? "fetch, FormData of openAsBlob of a file written each time" : "node:http from memory"
    console.log(`1 MiB uploads, sequential (client: ${client}), ${rounds} paired blocks of ${smallPerBlock}:`)
    console.log(`  POST /v3/files: ${small.rates.measured} req/s; the bare node:http server (the client's ceiling): ${small.rates["bare node:http"]} req/s; ratio ${Paired.show(small.ratios["bare node:http"])}`)
    console.log(`  server CPU per upload ${cpus.median.toFixed(1)} ms (${cpus.min.toFixed(1)}–${cpus.max.toFixed(1)})`)
  })

try {
  await Effect.runPromise(program)
} finally {
  agent.destroy()
  bare.kill("SIGTERM")
  server.kill("SIGTERM")
  await new Promise((resolve) => server.once("exit", resolve))
  rmSync(dataDir, { recursive: true, force: true })
}
