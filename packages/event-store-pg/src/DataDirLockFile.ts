/**
 * The lock files of DataDirLock.ts, without Effect: what a process can run before it loads anything large (the
 * embedded database opened early in a worker, PgliteWorker.ts).
 */
import * as Fs from "node:fs"
import * as Path from "node:path"

/** What the lock file holds. */
interface Holder {
  readonly pid: number
  /** /proc/sys/kernel/random/boot_id: a lock from before a reboot is stale whatever its pid. */
  readonly bootId?: string
  /** Field 22 of /proc/<pid>/stat (clock ticks after boot): tells a reused pid from the process that took the lock. */
  readonly startTime?: string
}

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

/** A lock this process holds. */
export interface Held {
  readonly file: string
  readonly content: string
}

/** Another live process holds the lock. */
export interface HeldByOther {
  readonly heldBy: number
}

/** Takes the lock in `file` now, or names the live process that holds it. */
export const acquireSync = (file: string): Held | HeldByOther => {
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
    if (holder !== undefined && isLive(holder)) return { heldBy: holder.pid }
    // Stale (or unreadable): taken over, unless another process took it over first.
    if (readOrUndefined(file) === existing) Fs.rmSync(file, { force: true })
  }
  return { heldBy: parse(readOrUndefined(file) ?? "")?.pid ?? 0 }
}

/** Gives the lock up: only our own, never one a later server took over. */
export const releaseSync = ({ file, content }: Held) => {
  if (readOrUndefined(file) === content) Fs.rmSync(file, { force: true })
}

