/**
 * `npm run bench:gateway`: the path gateway (decision 0045) through the real server (`apps/server-node`, its own
 * process, embedded database and IPFS in a temporary directory, simulated engine), this process the client.
 *
 *   a  GET /ipfs/<cid> of a 100 MiB file (by `curl -o /dev/null`, a client that costs little beside the server it
 *      measures; `BENCH_CLIENT=http`, or no curl on the PATH: node:http in this process, the body read and dropped,
 *      which costs this process about as much as the server), paired (Paired.ts) with reading the
 *      same blocks straight from the server's blockstore in this process (the store's own FsBlocks on
 *      `DATA_DIR/ipfs/public`: the root, then each leaf its links name, in order): MB/s and the ratio (goal ≥ 0.5x).
 *      Both read from the page cache (a warm-up reads everything first).
 *   b  a Range read of 1 MiB from the file's middle: the 206 through the server, and the blocks the read touches,
 *      counted in this process by the embedded store's own code (HeliaContentStore, the code the gateway runs) over a
 *      blockstore that counts its reads; beside it what ipfs-unixfs-exporter's ranged read of the same bytes reads.
 *
 * BENCH_ROUNDS paired rounds (5), BENCH_MIB the file's size (100).
 */
import { FsBlocks as FsBlocksModule, HeliaContentStore } from "@cairn/content-store-helia"
import * as dagPb from "@ipld/dag-pb"
import { MemoryBlockstore } from "blockstore-core"
import { Effect, Stream } from "effect"
import { exporter } from "ipfs-unixfs-exporter"
import { CID } from "multiformats/cid"
import { execFile, spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as http from "node:http"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Paired from "./Paired.ts"

const { FsBlocks } = FsBlocksModule
type FsBlocks = FsBlocksModule.FsBlocks

const rounds = Number(process.env["BENCH_ROUNDS"] ?? 5)
const MiB = 1024 * 1024
const bigBytes = Number(process.env["BENCH_MIB"] ?? 100) * MiB
const dataDir = mkdtempSync(join(tmpdir(), "cairn-bench-gateway-"))
const port = 42_000 + Math.floor(Math.random() * 1000)
const base = `http://127.0.0.1:${port}`
const mb = (bytes: number) => bytes / 1e6

const env: Record<string, string | undefined> = { ...process.env, PORT: String(port), DATA_DIR: join(dataDir, "data"), ENGINE: "simulated", SANDBOX: "off" }
for (const name of ["DATABASE_URL", "KUBO_API_URL", "KUBO_PUBLIC_API_URL", "KUBO_PRIVATE_API_URL"]) delete env[name]
const server = spawn(process.execPath, [fileURLToPath(new URL("../apps/server-node/src/main.ts", import.meta.url))], {
  env,
  stdio: ["ignore", "ignore", "inherit"]
})

/** The server's CPU time so far (user and system), in milliseconds (Linux; NaN elsewhere). */
const serverCpu = () => {
  const stat = `/proc/${server.pid}/stat`
  if (!existsSync(stat)) return Number.NaN
  const fields = readFileSync(stat, "utf8").split(") ")[1]!.split(" ")
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
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

const agent = new http.Agent({ keepAlive: true })
const client = process.env["BENCH_CLIENT"] ?? (spawnSync("curl", ["--version"]).status === 0 ? "curl" : "http")

/** The whole file by curl, into /dev/null: the bytes curl says it got. */
const curl = (path: string) =>
  new Promise<number>((resolve, reject) =>
    execFile("curl", ["-sS", "-o", "/dev/null", "-w", "%{size_download} %{http_code}", `${base}${path}`], (error, stdout) => {
      if (error !== null) return reject(error)
      const [bytes, status] = stdout.trim().split(" ")
      return status === "200" ? resolve(Number(bytes)) : reject(new Error(`curl ${path}: ${status}`))
    }))

/** A GET read to its end and dropped: the status, the headers and how many bytes came. */
const download = (path: string, headers: Record<string, string> = {}) =>
  new Promise<{ readonly status: number; readonly headers: http.IncomingHttpHeaders; readonly bytes: number; readonly body: Array<Buffer> }>((resolve, reject) => {
    const request = http.get(`${base}${path}`, { agent, headers }, (response) => {
      let bytes = 0
      const body: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => {
        bytes += chunk.byteLength
        if (bytes <= MiB) body.push(chunk)
      })
      response.on("end", () => resolve({ status: response.statusCode!, headers: response.headers, bytes, body }))
      response.on("error", reject)
    })
    request.on("error", reject)
  })

/** A block's bytes, as the blockstore hands them out. */
const blockOf = async (store: FsBlocks, cid: CID) => {
  const pieces: Array<Uint8Array> = []
  for await (const piece of store.get(cid)) pieces.push(piece)
  return pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces)
}

/** Every block of the file straight from the blockstore, in order: the root, then the leaves it links (one level). */
const readBlocks = async (store: FsBlocks, root: CID) => {
  const top = await blockOf(store, root)
  let bytes = top.byteLength
  for (const link of dagPb.decode(top).Links) bytes += (await blockOf(store, link.Hash)).byteLength
  return bytes
}

/** A blockstore that counts the blocks it hands out. */
class Counting extends FsBlocks {
  reads = 0
  override get(key: CID, options?: Parameters<FsBlocks["get"]>[1]) {
    this.reads++
    return super.get(key, options)
  }
}

const program = Effect.gen(function*() {
  yield* Effect.promise(ready)
  const { id: workspaceId } = yield* Effect.promise(() => admin("/admin/workspaces", { name: "bench", plan: "pro" }))
  const { token: key } = yield* Effect.promise(() => admin("/admin/keys", { workspaceId, userId: "bench", scopes: ["org:files:read", "org:files:write"] }))
  const content = randomBytes(bigBytes)
  const cid = yield* Effect.promise(async () => {
    const form = new FormData()
    form.append("file", new Blob([content]), "big.bin")
    form.append("network", "public")
    const response = await fetch(`${base}/v3/files`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form })
    if (response.status !== 200) throw new Error(`upload: ${response.status} ${await response.text()}`)
    return ((await response.json()) as { data: { cid: string } }).data.cid
  })
  const blocks = new FsBlocks(join(dataDir, "data", "ipfs", "public"))
  yield* Effect.promise(() => blocks.open())
  const root = CID.parse(cid)

  // Warm-up: both sides read everything once, so both read from the page cache.
  const warm = yield* Effect.promise(() => download(`/ipfs/${cid}`))
  if (warm.status !== 200 || warm.bytes !== bigBytes) throw new Error(`GET /ipfs/${cid}: ${warm.status}, ${warm.bytes} bytes`)
  const blockBytes = yield* Effect.promise(() => readBlocks(blocks, root))

  const cpu: Array<number> = []
  const paired = yield* Paired.rounds({
    rounds,
    measured: () =>
      Effect.gen(function*() {
        const before = serverCpu()
        const block = yield* Paired.timed(mb(bigBytes), Effect.promise(async () => {
          const got = client === "curl" ? await curl(`/ipfs/${cid}`) : (await download(`/ipfs/${cid}`)).bytes
          if (got !== bigBytes) throw new Error(`${got} bytes`)
        }))
        cpu.push(serverCpu() - before)
        return block
      }),
    baselines: { "the blockstore in process": () => Paired.timed(mb(bigBytes), Effect.promise(() => readBlocks(blocks, root))) }
  })
  const cpus = Paired.spread(cpu)
  console.log(`GET /ipfs/<cid> of a ${bigBytes / MiB} MiB file (${dagPb.decode(yield* Effect.promise(() => blockOf(blocks, root))).Links.length} leaves of 1 MiB; client: ${client}), ${rounds} paired rounds:`)
  console.log(`  through the gateway: ${paired.rates.measured} MB/s; the same ${(blockBytes / MiB).toFixed(1)} MiB of blocks straight from the blockstore in process: ${paired.rates["the blockstore in process"]} MB/s`)
  console.log(`  ratio ${Paired.show(paired.ratios["the blockstore in process"])} (goal ≥ 0.5x); server CPU per download ${cpus.median.toFixed(0)} ms (${cpus.min.toFixed(0)}–${cpus.max.toFixed(0)})`)

  // b: a 1 MiB range from the middle, through the server, then counted in process.
  const middle = Math.floor(bigBytes / MiB / 2) * MiB
  const started = performance.now()
  const ranged = yield* Effect.promise(() => download(`/ipfs/${cid}`, { range: `bytes=${middle}-${middle + MiB - 1}` }))
  const rangeMillis = performance.now() - started
  if (ranged.status !== 206 || ranged.bytes !== MiB || !Buffer.concat(ranged.body).equals(content.subarray(middle, middle + MiB))) {
    throw new Error(`Range: ${ranged.status}, ${ranged.bytes} bytes`)
  }
  const counting = new Counting(join(dataDir, "data", "ipfs", "public"))
  yield* Effect.promise(() => counting.open())
  const store = yield* HeliaContentStore.make({ public: counting, private: new MemoryBlockstore() })
  const countRange = (offset: number) =>
    Effect.gen(function*() {
      counting.reads = 0
      const read = yield* Stream.mkUint8Array(store.cat(cid, "public", { offset, length: MiB }))
      if (!Buffer.from(read).equals(content.subarray(offset, offset + MiB))) throw new Error("the range read other bytes")
      return counting.reads
    })
  const aligned = yield* countRange(middle)
  const straddling = yield* countRange(middle + 4096)
  const exporterReads = (offset: number) =>
    Effect.promise(async () => {
      counting.reads = 0
      const entry = await exporter(root, counting)
      if (entry.type !== "file") throw new Error(entry.type)
      for await (const _ of entry.content({ offset, length: MiB })) {
        // read and dropped
      }
      return counting.reads
    })
  const exporterAligned = yield* exporterReads(middle)
  const exporterStraddling = yield* exporterReads(middle + 4096)
  console.log(`Range: bytes=${middle}-${middle + MiB - 1} (1 MiB from the middle): 206, ${ranged.headers["content-range"]}, ${rangeMillis.toFixed(1)} ms`)
  console.log(`  blocks read by the gateway's store: ${aligned} (the root and the one leaf holding it); 4 KiB further, across two leaves: ${straddling}; of ${blockBytes > 0 ? dagPb.decode(yield* Effect.promise(() => blockOf(blocks, root))).Links.length + 1 : 0} in the file`)
  console.log(`  ipfs-unixfs-exporter's ranged read of the same bytes: ${exporterAligned} and ${exporterStraddling} blocks`)
  yield* Effect.promise(() => counting.close())
  yield* Effect.promise(() => blocks.close())
})

try {
  await Effect.runPromise(program)
} finally {
  agent.destroy()
  server.kill("SIGTERM")
  await new Promise((resolve) => server.once("exit", resolve))
  rmSync(dataDir, { recursive: true, force: true })
}
