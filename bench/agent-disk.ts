/**
 * `npm run bench:disk`: what an agent's filesystem of its own (decision 0044) costs, each against a plain folder on
 * the host's disk (the home before), in the same run:
 *
 * - making a home: an image made, formatted and mounted (an agent's first provision) vs a folder made;
 * - mounting an existing one again (each later provision: a Cairn restart) vs a folder that is there;
 * - writing 64 MiB to one file and syncing it, inside the agent's filesystem vs in a folder on the host's disk;
 * - making 2,000 small files in 100 folders (a `node_modules` install's shape) and removing them, the same way (not
 *   synced: a sync of the host's filesystem would also wait for everything else written on it).
 *
 * Each pair runs in rounds (Paired.ts), the order rotating; it prints both sides and the median and min–max of the
 * per-round ratios (the folder's time over the filesystem's: below 1 is slower). Needs root and e2fsprogs.
 */
import { OpenClawAgentDisks } from "@cairn/agent-engine-openclaw"
import { Effect } from "effect"
import { closeSync, fsyncSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Paired from "./Paired.ts"

const runs = Number(process.env["BENCH_RUNS"] ?? 10)
const dataDir = mkdtempSync(join(tmpdir(), "cairn-bench-disk-"))
const disks = await OpenClawAgentDisks.make(dataDir, 1024 ** 3)
if (typeof disks === "string") {
  console.log(`agents have no filesystems of their own here (${disks}): nothing to measure`)
  rmSync(dataDir, { recursive: true, force: true })
  process.exit(0)
}

const timed = (operation: () => Promise<unknown> | unknown) => () => Effect.promise(async () => void (await operation()))
const show = (label: string, result: Paired.Paired<"folder">, unit: (rate: number) => string) =>
  console.log(`${label}: own filesystem ${unit(result.rates.measured)}, plain folder ${unit(result.rates["folder"])}; ratio ${Paired.show(result.ratios["folder"])}`)
const perCall = (rate: number) => `${(1000 / rate).toFixed(1)} ms`

let made = 0
const fresh = (kind: string) => join(dataDir, "agents", `${kind}-${made++}`)

show("a new home (first provision)", await Effect.runPromise(Paired.throughput({
  rounds: runs,
  opsPerBlock: 1,
  measured: timed(() => disks.attach(fresh("disk"))),
  baselines: { folder: timed(() => mkdirSync(fresh("folder"), { recursive: true })) }
})), perCall)

const mounted = fresh("disk")
await disks.attach(mounted)
const folder = fresh("folder")
mkdirSync(folder, { recursive: true })

show("a home mounted again (a later provision)", await Effect.runPromise(Paired.throughput({
  rounds: runs,
  opsPerBlock: 1,
  measured: timed(async () => {
    await disks.detach(mounted)
    await disks.attach(mounted)
  }),
  baselines: { folder: timed(() => mkdirSync(folder, { recursive: true })) }
})), perCall)

const chunk = Buffer.alloc(1024 * 1024, 97)
const bigFile = (home: string) => () => {
  const fd = openSync(join(home, "big"), "w")
  for (let i = 0; i < 64; i++) writeSync(fd, chunk)
  fsyncSync(fd)
  closeSync(fd)
  rmSync(join(home, "big"))
}
show("64 MiB written and synced", await Effect.runPromise(Paired.throughput({
  rounds: runs, opsPerBlock: 1, measured: timed(bigFile(mounted)), baselines: { folder: timed(bigFile(folder)) }
})), (rate) => `${(rate * 64).toFixed(0)} MiB/s`)

const small = Buffer.alloc(2048, 98)
const manyFiles = (home: string) => () => {
  const dir = join(home, "node_modules")
  for (let i = 0; i < 2000; i++) {
    if (i % 20 === 0) mkdirSync(join(dir, `p${i}`), { recursive: true })
    const fd = openSync(join(dir, `p${i - (i % 20)}`, `f${i}.js`), "w")
    writeSync(fd, small)
    closeSync(fd)
  }
  rmSync(dir, { recursive: true })
}
show("2,000 small files written and removed", await Effect.runPromise(Paired.throughput({
  rounds: runs, opsPerBlock: 1, measured: timed(manyFiles(mounted)), baselines: { folder: timed(manyFiles(folder)) }
})), perCall)

for (let i = 0; i < made; i++) {
  for (const kind of ["disk", "folder"]) await disks.remove(join(dataDir, "agents", `${kind}-${i}`)).catch(() => {})
}
rmSync(dataDir, { recursive: true, force: true })
process.exit(0)
