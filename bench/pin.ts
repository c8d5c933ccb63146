/**
 * `npm run bench:pin`: pin by CID between two real servers on loopback (`apps/server-node`, each its own process,
 * embedded database and IPFS in a temporary directory, simulated engine). Server A holds folders of 2,000 small
 * files (uploaded as one multipart folder each); server B has `PIN_SOURCES=<A>` and pins each by CID
 * (`POST /v3/files/public/pin_by_cid`, then the job polled every 10 ms until `pinned`): the whole DAG fetched as A's
 * trustless CAR, every block hashed against its CID, stored in B's blockstore and recorded as a file. Paired
 * (Paired.ts) with a plain copy of the same bytes: the same folder's CAR from A's gateway written to a file on B's
 * disk (by `curl -o`, or fetch in this process without curl). Prints the rates and the ratio (goal ≥ 0.3x).
 *
 * BENCH_ROUNDS paired rounds (5), BENCH_FILES files per folder (2000), BENCH_FILE_BYTES each file's size (4096).
 */
import { execFile, spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import * as Paired from "./Paired.ts"

const rounds = Number(process.env["BENCH_ROUNDS"] ?? 5)
const files = Number(process.env["BENCH_FILES"] ?? 2000)
const fileBytes = Number(process.env["BENCH_FILE_BYTES"] ?? 4096)
const dir = mkdtempSync(join(tmpdir(), "cairn-bench-pin-"))
const main = fileURLToPath(new URL("../apps/server-node/src/main.ts", import.meta.url))
const portBase = 43_000 + Math.floor(Math.random() * 900)

const start = (name: string, port: number, extra: Record<string, string> = {}) => {
  const env: Record<string, string | undefined> = { ...process.env, PORT: String(port), DATA_DIR: join(dir, name), ENGINE: "simulated", SANDBOX: "off", SNAPSHOTS: "off", ...extra }
  for (const variable of ["DATABASE_URL", "KUBO_API_URL", "KUBO_PUBLIC_API_URL", "KUBO_PRIVATE_API_URL"]) delete env[variable]
  const child = spawn(process.execPath, [main], { env, stdio: ["ignore", process.env["BENCH_LOGS"] === "1" ? "inherit" : "ignore", "inherit"] })
  return { child, url: `http://127.0.0.1:${port}`, dataDir: join(dir, name) }
}
const a = start("a", portBase)
const b = start("b", portBase + 1, { PIN_SOURCES: a.url, PIN_CONCURRENCY: "1" })

const ready = async (url: string) => {
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) return
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${url} did not get ready`)
}

const keyFor = async (server: { url: string; dataDir: string }) => {
  const token = readFileSync(join(server.dataDir, "admin-token"), "utf8").trim()
  const admin = async (path: string, body: unknown) => {
    const response = await fetch(`${server.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) })
    if (response.status !== 201) throw new Error(`${path}: ${response.status} ${await response.text()}`)
    return ((await response.json()) as { data: Record<string, string> }).data
  }
  const { id: workspaceId } = await admin("/admin/workspaces", { name: "bench", plan: "pro" })
  return (await admin("/admin/keys", { workspaceId, userId: "bench", scopes: ["org:files:read", "org:files:write"] })).token!
}

/** A folder of `files` random files uploaded to A: its CID. */
const uploadFolder = async (key: string, index: number) => {
  const form = new FormData()
  for (let i = 0; i < files; i++) form.append("file", new Blob([randomBytes(fileBytes)]), `folder-${index}/f${String(i).padStart(5, "0")}.bin`)
  form.append("network", "public")
  const response = await fetch(`${a.url}/v3/files`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form })
  if (response.status !== 200) throw new Error(`upload: ${response.status} ${await response.text()}`)
  return ((await response.json()) as { data: { cid: string } }).data.cid
}

const pin = async (key: string, cid: string) => {
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" }
  const queued = await fetch(`${b.url}/v3/files/public/pin_by_cid`, { method: "POST", headers, body: JSON.stringify({ cid }) })
  if (queued.status !== 200) throw new Error(`pin: ${queued.status} ${await queued.text()}`)
  const { id } = ((await queued.json()) as { data: { id: string } }).data
  for (;;) {
    const listed = await fetch(`${b.url}/v3/files/public/pin_by_cid?cid=${cid}&limit=1000`, { headers })
    const job = ((await listed.json()) as { data: { jobs: Array<{ id: string; status: string; reason: string | null }> } }).data.jobs.find((j) => j.id === id)
    if (job?.status === "pinned") return
    if (job?.status === "failed") throw new Error(`pin failed: ${job.reason}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

const curl = spawnSync("curl", ["--version"]).status === 0
/** The folder's CAR from A, written to a file on B's disk: the bytes. */
const copy = async (cid: string, round: number) => {
  const target = join(b.dataDir, `copy-${round}.car`)
  const url = `${a.url}/ipfs/${cid}?format=car`
  if (curl) {
    await new Promise<void>((resolve, reject) =>
      execFile("curl", ["-sS", "-o", target, "-H", "accept: application/vnd.ipld.car", url], (error) => (error === null ? resolve() : reject(error))))
  } else {
    writeFileSync(target, new Uint8Array(await (await fetch(url, { headers: { accept: "application/vnd.ipld.car" } })).arrayBuffer()))
  }
  const bytes = statSync(target).size
  rmSync(target)
  return bytes
}

const program = Effect.gen(function*() {
  yield* Effect.promise(() => Promise.all([ready(a.url), ready(b.url)]))
  const aKey = yield* Effect.promise(() => keyFor(a))
  const bKey = yield* Effect.promise(() => keyFor(b))
  // One folder per round and one to warm up with: a pin of a CID B already holds would measure less.
  const cids: Array<string> = []
  for (let i = 0; i <= rounds; i++) cids.push(yield* Effect.promise(() => uploadFolder(aKey, i)))
  const carBytes = yield* Effect.promise(() => copy(cids[0]!, -1))
  yield* Effect.promise(() => pin(bKey, cids[0]!))
  // Operations are bytes (Paired rounds its rates to whole operations a second).
  const mb = carBytes
  const paired = yield* Paired.rounds({
    rounds,
    measured: (round) => Paired.timed(mb, Effect.promise(() => pin(bKey, cids[round + 1]!))),
    baselines: { "a plain copy": (round) => Paired.timed(mb, Effect.promise(() => copy(cids[round + 1]!, round))) }
  })
  console.log(`Pin by CID of a ${files}-file folder (${fileBytes} B each; its CAR ${(carBytes / 1e6).toFixed(2)} MB) from another Cairn on loopback, ${rounds} paired rounds:`)
  console.log(`  pin by CID: ${(paired.rates.measured / 1e6).toFixed(2)} MB/s (${(carBytes / paired.rates.measured * 1000).toFixed(0)} ms a folder); a plain copy of the same CAR to B's disk (${curl ? "curl" : "fetch"}): ${(paired.rates["a plain copy"] / 1e6).toFixed(2)} MB/s (${(carBytes / paired.rates["a plain copy"] * 1000).toFixed(0)} ms)`)
  console.log(`  ratio ${Paired.show(paired.ratios["a plain copy"])} (goal ≥ 0.3x)`)
})

try {
  await Effect.runPromise(program)
} finally {
  for (const server of [b, a]) {
    server.child.kill("SIGTERM")
    await new Promise((resolve) => server.child.once("exit", resolve))
  }
  rmSync(dir, { recursive: true, force: true })
}
