/**
 * `npm run bench:snapshots`: workspace snapshots (issue 14) through the application's Snapshots service, in process,
 * on the real stack: a real OpenClaw agent (OpenClawAgentEngine, engines from OPENCLAW_ENGINES_DIR), the embedded
 * snapshot store on disk (HeliaSnapshotStore, FsBlockstore under `<DATA_DIR>/ipfs/snapshots`) and PGlite, in a
 * temporary DATA_DIR. The workload: 2,000 files, 100 MiB in all (mostly small files, a few of several MiB, one of
 * 1 MiB), incompressible pseudo-random bytes, written into the agent's workspace on disk. Each repetition writes a
 * tree of new content, then measures, paired with a raw baseline on the same tree in the same repetition:
 *
 *   a  first sync                                   vs `tar -cf - <workspace> | sha256sum` (goal ≥ 0.4x, tar time / sync time)
 *   b  second sync after rewriting the 1 MiB file   bytes added (change summary, and the blockstore's growth on
 *                                                   disk; goal ≤ 2 MB) and time (goal ≤ 10 % of the first sync)
 *   c  reset to the first snapshot                  vs `cp -a <workspace> <new dir>` (goal ≥ 0.3x, cp time / reset time)
 *   c' reset of an emptied workspace (every file written), vs the same `cp -a`, for honesty
 *
 * The agent is created through Agents.create (which starts its gateway, once), then its gateway is stopped: the
 * workspace then changes only when the bench changes it, and a reset restarts only a gateway that was running, so
 * the reset figures are the restore alone (a running gateway would add its restart, which bench:engine measures).
 * Both sides read a tree that is in the page cache (it was just written); dirty pages are written out (`sync`,
 * untimed) before each measurement, and neither side fsyncs. Files written less than the scan's racy window (2 s)
 * before a scan carry no fingerprint and are read again, so the bench lets the freshly written tree age past it
 * before the first sync, as any workspace not written that instant has. BENCH_RUNS repetitions (3).
 */
import { AgentEngine } from "@cairn/agent-engine"
import { OpenClawAgentHome } from "@cairn/agent-engine-openclaw"
import { Agents, ApiKeys, Snapshots, Workspaces } from "@cairn/application"
import { PgDatabase } from "@cairn/event-store-pg"
import { CairnRuntime } from "@cairn/runtime"
import { NodeServices } from "@effect/platform-node"
import { ConfigProvider, Effect, Layer, ManagedRuntime } from "effect"
import { spawn, spawnSync } from "node:child_process"
import { createCipheriv, createHash } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { homedir, tmpdir } from "node:os"
import { dirname, join } from "node:path"

const runs = Number(process.env["BENCH_RUNS"] ?? 3)
const enginesDir = process.env["OPENCLAW_ENGINES_DIR"] ?? join(homedir(), ".cache", "cairn", "openclaw-engines")
const dataDir = mkdtempSync(join(tmpdir(), "cairn-bench-snapshots-"))
const scratch = mkdtempSync(join(tmpdir(), "cairn-bench-snapshots-raw-"))
const blocksDir = join(dataDir, "ipfs", "snapshots")
const MiB = 1024 * 1024
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

/** The newest OpenClaw version already installed in the cache, so the bench never installs one (unless told). */
const installedVersion = () => {
  const versions = (existsSync(enginesDir) ? readdirSync(enginesDir) : [])
    .filter((name) => /^\d{4}\.\d{1,2}\.\d{1,2}$/.test(name) && existsSync(join(enginesDir, name, "node_modules", "openclaw", "openclaw.mjs")))
    .sort((a, b) => {
      const [x, y] = [a.split(".").map(Number), b.split(".").map(Number)]
      return x[0]! - y[0]! || x[1]! - y[1]! || x[2]! - y[2]!
    })
  return versions.at(-1)
}
const versions = process.env["OPENCLAW_VERSIONS"] ?? installedVersion()

// --- The workload -------------------------------------------------------------------------------------------

/** A small deterministic PRNG (mulberry32): the same layout every run. */
const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const fileCount = 2000
const totalBytes = 100 * MiB
const largeCount = 24
/** The file the second sync finds changed. */
const rewritten = "project/data/embeddings.bin"

/** 2,000 paths and sizes adding up to 100 MiB: 1,975 files of 1–64 KiB (log-uniform), 24 of about 2–6 MiB, one of 1 MiB. */
const layout = (() => {
  const random = prng(14)
  const small = Array.from({ length: fileCount - largeCount - 1 }, () => Math.round(1024 * 64 ** random()))
  const rawLarge = Array.from({ length: largeCount }, () => 2 + 4 * random())
  const left = totalBytes - MiB - small.reduce((a, b) => a + b, 0)
  const scale = left / rawLarge.reduce((a, b) => a + b, 0)
  const large = rawLarge.map((r) => Math.floor(r * scale))
  large[0]! += left - large.reduce((a, b) => a + b, 0)
  const extensions = [".md", ".json", ".ts", ".txt", ".bin", ".png"]
  const files = small.map((size, i) => ({
    path: `project/src/m${i % 40}/${i % 3 === 0 ? "" : `part${i % 5}/`}file-${i}${extensions[i % extensions.length]}`,
    size
  }))
  files.push(...large.map((size, i) => ({ path: `project/assets/blob-${i}.bin`, size })))
  files.push({ path: rewritten, size: MiB })
  return files
})()

/** Incompressible bytes, the same for the same seed and index: AES-256-CTR's keystream. */
const bytesOf = (seed: string, index: number, size: number) => {
  const key = createHash("sha256").update(seed).digest()
  const iv = Buffer.alloc(16)
  iv.writeUInt32BE(index, 0)
  return createCipheriv("aes-256-ctr", key, iv).update(Buffer.alloc(size))
}

const writeTree = (root: string, seed: string) => {
  layout.forEach((file, index) => {
    mkdirSync(dirname(join(root, file.path)), { recursive: true })
    writeFileSync(join(root, file.path), bytesOf(seed, index, file.size))
  })
}

/** Regular files under `dir` and their total size (apparent bytes). */
const filesUnder = (dir: string) => {
  let count = 0
  let bytes = 0
  if (!existsSync(dir)) return { count, bytes }
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    count++
    bytes += statSync(join(entry.parentPath, entry.name)).size
  }
  return { count, bytes }
}

/** Runs a shell pipeline and gives its wall time in ms. */
const shell = (command: string) =>
  new Promise<number>((resolve, reject) => {
    const startedAt = performance.now()
    const child = spawn("bash", ["-o", "pipefail", "-c", command], { stdio: ["ignore", "ignore", "inherit"] })
    child.once("error", reject)
    child.once("exit", (code) => code === 0 ? resolve(performance.now() - startedAt) : reject(new Error(`${command}: exit ${code}`)))
  })

/** Writes dirty pages out (untimed) before each measurement, so no step pays for the writes of the one before. */
const flush = () => {
  if (spawnSync("sync").status !== 0) throw new Error("sync failed")
}

const emptyDir = (dir: string) => {
  for (const name of readdirSync(dir)) rmSync(join(dir, name), { recursive: true, force: true })
}

// --- The stack ----------------------------------------------------------------------------------------------

const config = ConfigProvider.fromUnknown({
  DATA_DIR: dataDir,
  OPENCLAW_ENGINES_DIR: enginesDir,
  OPENCLAW_BASE_PORT: "25000",
  SNAPSHOT_INTERVAL: "0",
  ...(versions === undefined ? {} : { OPENCLAW_VERSIONS: versions })
})
const runtime = ManagedRuntime.make(
  CairnRuntime.layerApplication(PgDatabase.layerPglite(join(dataDir, "pg"))).pipe(
    Layer.provideMerge(NodeServices.layer),
    Layer.provide(ConfigProvider.layer(config))
  )
)
type Services = ManagedRuntime.ManagedRuntime.Services<typeof runtime>
const run = <A, E>(effect: Effect.Effect<A, E, Services>) => runtime.runPromise(effect)
const timed = async <A, E>(effect: Effect.Effect<A, E, Services>) => {
  const startedAt = performance.now()
  const value = await run(effect)
  return { value, ms: performance.now() - startedAt }
}

interface Rep {
  readonly tarMs: number
  readonly syncMs: number
  readonly bytes: number
  readonly sync2Ms: number
  readonly bytesAdded: number
  readonly diskGrowth: number
  readonly newBlocks: number
  readonly cpMs: number
  readonly resetMs: number
  readonly resetAllMs: number
}

try {
  const { principal, agentId, engineVersion } = await run(Effect.gen(function*() {
    const workspaceId = yield* (yield* Workspaces).create({ name: "bench", plan: "pro", internal: false })
    const keys = yield* ApiKeys
    const { token } = yield* keys.create({ workspaceId, userId: "bench", scopes: ["org:agents"] })
    const principal = yield* keys.authenticate(token)
    const agents = yield* Agents
    const { agent } = yield* agents.create(principal, { name: "bench snapshots" })
    return { principal, agentId: agent.agentId, engineVersion: agent.engineVersion }
  }))
  const deadline = Date.now() + 300_000
  for (;;) {
    const status = await run(AgentEngine.use((engine) => engine.status(agentId)))
    if (status.state === "running") break
    if (Date.now() > deadline) throw new Error(`the agent did not start: ${JSON.stringify(status)}`)
    await sleep(250)
  }
  await run(AgentEngine.use((engine) => engine.stop(agentId)))
  const workspace = OpenClawAgentHome.workspaceDir(join(dataDir, "agents", agentId))
  const snapshots = await run(Snapshots.use(Effect.succeed))
  const sync = () => timed(snapshots.sync(principal, agentId))
  const reset = (cid: string) => timed(snapshots.reset(principal, agentId, JSON.stringify({ snapshotCid: cid })))

  console.log(`OpenClaw ${engineVersion} (gateway stopped), ${layout.length} files / ${(totalBytes / MiB).toFixed(0)} MiB, ${runs} repetitions, Node ${process.version}`)
  const reps: Array<Rep> = []
  for (let rep = 1; rep <= runs; rep++) {
    // A tree of new content each repetition (no block already stored), aged past the racy window.
    rmSync(join(workspace, "project"), { recursive: true, force: true })
    writeTree(workspace, `bench-${rep}`)
    await sleep(2_500)
    const tree = filesUnder(workspace)

    // a: first sync vs tar | sha256sum of the same tree.
    flush()
    const tarMs = await shell(`tar -cf - -C ${JSON.stringify(workspace)} . | sha256sum`)
    flush()
    const first = await sync()
    if (!first.value.recorded) throw new Error("the first sync recorded nothing")

    // b: one 1 MiB file rewritten, then a second sync.
    writeFileSync(join(workspace, rewritten), bytesOf(`bench-${rep}-changed`, 0, MiB))
    const blocksBefore = filesUnder(blocksDir)
    flush()
    const second = await sync()
    const blocksAfter = filesUnder(blocksDir)

    // c: reset to the first snapshot (the workspace differs by one file) vs cp -a of the tree.
    flush()
    const cpMs = await shell(`cp -a ${JSON.stringify(workspace)} ${JSON.stringify(join(scratch, `copy-${rep}`))}`)
    rmSync(join(scratch, `copy-${rep}`), { recursive: true, force: true })
    flush()
    const back = await reset(first.value.snapshotCid)
    const expected = bytesOf(`bench-${rep}`, layout.length - 1, MiB)
    if (!readFileSync(join(workspace, rewritten)).equals(expected)) throw new Error("the reset did not restore the 1 MiB file")

    // c': reset of an emptied workspace: every file written from the store.
    emptyDir(workspace)
    flush()
    const all = await reset(first.value.snapshotCid)
    const restored = filesUnder(workspace)
    if (restored.count !== tree.count || restored.bytes !== tree.bytes) {
      throw new Error(`the reset wrote ${restored.count} files / ${restored.bytes} bytes, not ${tree.count} / ${tree.bytes}`)
    }

    reps.push({
      tarMs,
      syncMs: first.ms,
      bytes: tree.bytes,
      sync2Ms: second.ms,
      bytesAdded: second.value.changeSummary.bytesAdded,
      diskGrowth: blocksAfter.bytes - blocksBefore.bytes,
      newBlocks: blocksAfter.count - blocksBefore.count,
      cpMs,
      resetMs: back.ms,
      resetAllMs: all.ms
    })
    const r = reps.at(-1)!
    console.log(
      `rep ${rep}: tar|sha256sum ${r.tarMs.toFixed(0)} ms, sync ${r.syncMs.toFixed(0)} ms; second sync ${r.sync2Ms.toFixed(0)} ms ` +
        `(+${r.bytesAdded} B summary, +${r.diskGrowth} B / ${r.newBlocks} blocks on disk); cp -a ${r.cpMs.toFixed(0)} ms, ` +
        `reset ${r.resetMs.toFixed(0)} ms, reset of an emptied workspace ${r.resetAllMs.toFixed(0)} ms`
    )
  }

  const mbps = (bytes: number, ms: number) => bytes / 1e6 / (ms / 1000)
  const perRep = (f: (r: Rep) => number) => median(reps.map(f))
  const tarRatio = perRep((r) => r.tarMs / r.syncMs)
  const sync2Share = perRep((r) => r.sync2Ms / r.syncMs)
  const worstAdded = Math.max(...reps.map((r) => Math.max(r.bytesAdded, r.diskGrowth)))
  const resetRatio = perRep((r) => r.cpMs / r.resetMs)
  const resetAllRatio = perRep((r) => r.cpMs / r.resetAllMs)
  const met = (ok: boolean) => ok ? "yes" : "NO"
  console.log(`\nbench:snapshots, medians of ${runs} paired repetitions (ratios per repetition, then the median):\n`)
  console.table([
    {
      measure: "a first sync",
      Cairn: `${perRep((r) => r.syncMs).toFixed(0)} ms, ${perRep((r) => mbps(r.bytes, r.syncMs)).toFixed(0)} MB/s`,
      baseline: `tar | sha256sum ${perRep((r) => r.tarMs).toFixed(0)} ms, ${perRep((r) => mbps(r.bytes, r.tarMs)).toFixed(0)} MB/s`,
      ratio: `${tarRatio.toFixed(2)}x`,
      goal: ">= 0.4x",
      met: met(tarRatio >= 0.4)
    },
    {
      measure: "b second sync, time",
      Cairn: `${perRep((r) => r.sync2Ms).toFixed(0)} ms`,
      baseline: `first sync ${perRep((r) => r.syncMs).toFixed(0)} ms`,
      ratio: `${(sync2Share * 100).toFixed(1)} %`,
      goal: "<= 10 %",
      met: met(sync2Share <= 0.1)
    },
    {
      measure: "b second sync, bytes added",
      Cairn: `${(perRep((r) => r.bytesAdded) / 1e6).toFixed(2)} MB summary, ${(perRep((r) => r.diskGrowth) / 1e6).toFixed(2)} MB / ${perRep((r) => r.newBlocks)} blocks on disk`,
      baseline: "1 MiB file rewritten",
      ratio: `worst ${(worstAdded / 1e6).toFixed(2)} MB`,
      goal: "<= 2 MB",
      met: met(worstAdded <= 2e6)
    },
    {
      measure: "c reset to the first snapshot",
      Cairn: `${perRep((r) => r.resetMs).toFixed(0)} ms`,
      baseline: `cp -a ${perRep((r) => r.cpMs).toFixed(0)} ms`,
      ratio: `${resetRatio.toFixed(2)}x`,
      goal: ">= 0.3x",
      met: met(resetRatio >= 0.3)
    },
    {
      measure: "c' reset, emptied workspace",
      Cairn: `${perRep((r) => r.resetAllMs).toFixed(0)} ms, ${perRep((r) => mbps(r.bytes, r.resetAllMs)).toFixed(0)} MB/s`,
      baseline: `cp -a ${perRep((r) => r.cpMs).toFixed(0)} ms, ${perRep((r) => mbps(r.bytes, r.cpMs)).toFixed(0)} MB/s`,
      ratio: `${resetAllRatio.toFixed(2)}x`,
      goal: "(no goal; every file written)",
      met: ""
    }
  ])
  console.log(
    "Both resets include the pre-reset snapshot the service takes first; the gateway was stopped, so no restart is included.\n" +
      "MB = 10^6 bytes; the tree is the whole workspace (the bench's files and OpenClaw's own)."
  )
} finally {
  await runtime.dispose()
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(scratch, { recursive: true, force: true })
}
