/**
 * One process at a time in a directory. A server holds `DATA_DIR/server.lock` while it runs (two nodes on one
 * `DATA_DIR` would share its `node-id`, and with it every agent's gateway, home and port, its keys and its embedded
 * stores; with `DATABASE_URL` set nothing else notices), and the embedded database holds `<its directory>.lock`
 * (PGlite has no lock of its own, and two processes writing one directory corrupt it). A lock is created
 * exclusively and atomically (written aside, then hard-linked into place), holding its pid and, on Linux, the boot
 * and the process's start time. A lock whose process no longer runs (killed, crashed, a reboot since, or its pid
 * reused by another process) is taken over; one held by a live process refuses with `DataDirInUse`, which names the
 * pid and how to run a second node.
 */
import { Effect, Schema } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"

export class DataDirInUse extends Schema.TaggedError<DataDirInUse>()("DataDirInUse", {
  dir: Schema.String,
  pid: Schema.Number
}) {
  override get message() {
    return `The data directory ${this.dir} is in use by process ${this.pid} (another Cairn server): stop it first, ` +
      `or give this node a data directory of its own (DATA_DIR=<another directory> npm start)`
  }
}

/** What the lock file holds. */
interface Holder {
  readonly pid: number
  /** /proc/sys/kernel/random/boot_id: a lock from before a reboot is stale whatever its pid. */
  readonly bootId?: string
  /** Field 22 of /proc/<pid>/stat (clock ticks after boot): tells a reused pid from the process that took the lock. */
  readonly startTime?: string
}

/** The server's lock in its data directory. */
export const serverLock = (dir: string) => Path.join(dir, "server.lock")

const readOrUndefined = (path: string) => {
  try {
    return Fs.readFileSync(path, "utf8")
  } catch {
    return undefined
  }
}

const bootId = () => readOrUndefined("/proc/sys/kernel/random/boot_id")?.trim()

const startTimeOf = (pid: number) => {
  const stat = readOrUndefined(`/proc/${pid}/stat`)
  // The command name (field 2) may hold spaces and parentheses: count fields after its closing parenthesis.
  return stat?.slice(stat.lastIndexOf(")") + 2).split(" ")[19]
}

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const parse = (text: string): Holder | undefined => {
  try {
    const holder = JSON.parse(text) as Holder
    return Number.isSafeInteger(holder.pid) && holder.pid > 0 ? holder : undefined
  } catch {
    return undefined
  }
}

/** Whether the process that wrote the lock still runs (where it can be told, still the same process). */
const isLive = (holder: Holder) => {
  if (holder.pid === process.pid || !isRunning(holder.pid)) return false
  const boot = bootId()
  if (holder.bootId !== undefined && boot !== undefined && holder.bootId !== boot) return false
  const startTime = startTimeOf(holder.pid)
  return holder.startTime === undefined || startTime === undefined || holder.startTime === startTime
}

/** Creates the lock with its content in one step: a hard link fails when the name exists, and is never half written. */
const tryCreate = (file: string, content: string): boolean => {
  const aside = `${file}.${process.pid}.tmp`
  Fs.writeFileSync(aside, content)
  try {
    Fs.linkSync(aside, file)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false
    throw error
  } finally {
    Fs.rmSync(aside, { force: true })
  }
}

const acquireSync = (dir: string, file: string): { readonly file: string; readonly content: string } | DataDirInUse => {
  Fs.mkdirSync(Path.dirname(file), { recursive: true })
  const boot = bootId()
  const startTime = startTimeOf(process.pid)
  const content = JSON.stringify({
    pid: process.pid,
    ...(boot === undefined ? {} : { bootId: boot }),
    ...(startTime === undefined ? {} : { startTime })
  } satisfies Holder) + "\n"
  for (let attempt = 0; attempt < 3; attempt++) {
    if (tryCreate(file, content)) return { file, content }
    const existing = readOrUndefined(file)
    if (existing === undefined) continue // released meanwhile
    const holder = parse(existing)
    if (holder !== undefined && isLive(holder)) return new DataDirInUse({ dir, pid: holder.pid })
    // Stale (or unreadable): taken over, unless another process took it over first.
    if (readOrUndefined(file) === existing) Fs.rmSync(file, { force: true })
  }
  return new DataDirInUse({ dir, pid: parse(readOrUndefined(file) ?? "")?.pid ?? 0 })
}

/**
 * Holds `dir`'s lock (`file`, the server's by default) for the scope's lifetime; fails with `DataDirInUse` when a
 * live process holds it.
 */
export const acquire = (dir: string, file: string = serverLock(dir)) =>
  Effect.acquireRelease(
    Effect.suspend(() => {
      const outcome = acquireSync(Path.resolve(dir), Path.resolve(file))
      return outcome instanceof DataDirInUse ? Effect.fail(outcome) : Effect.succeed(outcome)
    }),
    ({ file, content }) =>
      Effect.sync(() => {
        // Only our own lock: never one a later server took over.
        if (readOrUndefined(file) === content) Fs.rmSync(file, { force: true })
      })
  )
