/**
 * One cgroup per agent (decision 0042): every sandbox of an agent (its gateway, its console commands, CLI runs acting
 * as it) joins the agent's cgroup, which caps what they use together: memory (the kernel's cgroup OOM killer then
 * kills only the agent's own processes), CPU time (a CFS quota) and processes. Per-process limits (prlimit) cannot do
 * that: three processes of 3 GiB each, or 16 busy loops, each pass on its own. The pids cap also matters because
 * RLIMIT_NPROC exempts root, and through the user namespace the sandbox's user is root's outside.
 *
 * Made under Cairn's own cgroup, in `cairn-agents-<Cairn's pid>/<agent>`: on cgroup v1 in the memory, cpu, cpuacct
 * (usage, for tests and metrics) and pids hierarchies, each found in /proc/self/mountinfo and /proc/self/cgroup; on
 * cgroup v2 for the controllers that can be enabled in Cairn's cgroup (`cgroup.subtree_control`). A controller that is
 * mounted nowhere Cairn can write is left out, and `enforced` says which hold. Each agent's cgroup is made at its
 * first sandbox, kept across its gateway's restarts (its OOM count is read from it after a crash), and removed when
 * the agent is destroyed; those of a Cairn that is gone are removed at the next start.
 *
 * Cairn reads the counters from its own cgroup folders, never from anything in the agent's home.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

export type Controller = "memory" | "cpu" | "pids"

/** What an agent's processes may use together. */
export interface AgentLimits {
  /** Memory (RSS, page cache and tmpfs pages it writes, swap included where it can be counted), in bytes. */
  readonly memoryBytes: number
  /** CPU time, in cores: 1.5 is 150 ms of CPU time every 100 ms. */
  readonly cpus: number
  /** Processes and threads together. */
  readonly pids: number
}

const GiB = 1024 ** 3

/**
 * Memory and processes are capped by default. CPU is capped at the machine's cores: a gateway's start takes 10-30 s of
 * CPU on several threads, and a lower default cap stretched every start (OPENCLAW_MAX_STARTS already bounds how
 * many run at once); operators who host many agents set AGENT_CPU_MAX lower.
 */
export const defaultAgentLimits: AgentLimits = { memoryBytes: 4 * GiB, cpus: Os.availableParallelism(), pids: 512 }

/** What an agent's cgroup counted; a field is undefined where its controller is not enforced. */
export interface AgentUsage {
  readonly memoryBytes: number | undefined
  /** The most memory it used at once since its cgroup was made (v1; v2 kernels with `memory.peak`). */
  readonly memoryPeakBytes: number | undefined
  /** How many of its processes the kernel's OOM killer killed since its cgroup was made. */
  readonly oomKills: number | undefined
  /** CPU time used by its processes, in nanoseconds. */
  readonly cpuNanos: number | undefined
}

export interface AgentCgroups {
  readonly enforced: ReadonlyArray<Controller>
  /** The `cgroup.procs` files a process writes its pid into to join the agent's cgroup; made at the first call. */
  readonly join: (agent: string) => ReadonlyArray<string>
  /** What the agent's cgroup counted; undefined before its first sandbox. */
  readonly usage: (agent: string) => AgentUsage | undefined
  /** Removes the agent's cgroup (its processes must be gone). */
  readonly remove: (agent: string) => void
}

interface Hierarchy {
  readonly version: 1 | 2
  /** The controllers it holds (for v1, besides `cpuacct`, which only counts). */
  readonly controllers: ReadonlyArray<Controller | "cpuacct">
  /** `cairn-agents-<pid>` in it. */
  readonly base: string
}

const basePrefix = "cairn-agents-"
/** Those of Cairn versions that made one pids cgroup per sandbox. */
const stalePattern = /^cairn-(?:agents|sandboxes)-(\d+)$/

const cfsPeriodUs = 100_000

/** A cgroup's name for the agent: its home's name is its id; anything else a path could hold is replaced. */
export const nameOf = (agent: string) => agent.replace(/[^A-Za-z0-9_.-]/g, "_").replace(/^\.+/, "_") || "_"

const readNumber = (file: string): number | undefined => {
  try {
    const value = Number(Fs.readFileSync(file, "utf8").trim())
    return Number.isFinite(value) ? value : undefined
  } catch {
    return undefined
  }
}

/** A `key value` line of a flat-keyed cgroup file (memory.oom_control, memory.events, cpu.stat). */
const readKey = (file: string, key: string): number | undefined => {
  try {
    const line = Fs.readFileSync(file, "utf8").split("\n").find((entry) => entry.startsWith(`${key} `))
    return line === undefined ? undefined : Number(line.slice(key.length + 1))
  } catch {
    return undefined
  }
}

const tryWrite = (file: string, value: string) => {
  try {
    Fs.writeFileSync(file, value)
    return true
  } catch {
    return false
  }
}

/** Removes `dir` once its last process is gone, which may take a moment after the exit is seen. */
const rmdirSoon = (dir: string) => {
  const attempt = (left: number) => {
    try {
      Fs.rmdirSync(dir)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === "EBUSY" && left > 0) setTimeout(() => attempt(left - 1), 100).unref()
    }
  }
  attempt(50)
}

/** The hierarchies this process can make agents' cgroups in; a string says why none. */
const hierarchies = (): Array<Hierarchy> | string => {
  const mounts = Fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n").map((line) => {
    const [before, after] = line.split(" - ")
    const fields = before?.split(" ") ?? []
    const [fsType, , superOptions] = after?.split(" ") ?? []
    return { root: fields[3] ?? "", mountPoint: fields[4] ?? "", fsType, options: superOptions?.split(",") ?? [] }
  })
  const own = Fs.readFileSync("/proc/self/cgroup", "utf8").split("\n").map((line) => {
    const [, controllers, path] = line.split(/:(.*?):/)
    return { controllers: controllers?.split(",") ?? [], path: path ?? "" }
  })
  const under = (mount: { readonly root: string; readonly mountPoint: string }, path: string) =>
    Path.join(mount.mountPoint, Path.relative(mount.root, path))
  const found: Array<Hierarchy> = []
  const failures: Array<string> = []
  const wanted = ["memory", "cpu", "pids", "cpuacct"] as const
  // cgroup v1: each controller's hierarchy (cpu and cpuacct are often mounted together).
  const v1Bases = new Map<string, Array<Controller | "cpuacct">>()
  for (const controller of wanted) {
    const mount = mounts.find((entry) => entry.fsType === "cgroup" && entry.options.includes(controller))
    const path = own.find((entry) => entry.controllers.includes(controller))
    if (mount === undefined || path === undefined) continue
    const base = Path.join(under(mount, path.path), `${basePrefix}${process.pid}`)
    v1Bases.set(base, [...(v1Bases.get(base) ?? []), controller])
  }
  for (const [base, controllers] of v1Bases) {
    try {
      Fs.mkdirSync(base, { recursive: true })
      found.push({ version: 1, controllers, base })
    } catch (error) {
      failures.push(`${controllers.join(",")}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  // cgroup v2, for the controllers v1 does not have: those Cairn's cgroup offers and lets its children use.
  const v2 = mounts.find((entry) => entry.fsType === "cgroup2")
  const v2Own = own.find((entry) => entry.controllers.length === 1 && entry.controllers[0] === "")
  const missing = (["memory", "cpu", "pids"] as const).filter((controller) => !found.some((h) => h.controllers.includes(controller)))
  if (v2 !== undefined && v2Own !== undefined && missing.length > 0) {
    const parent = under(v2, v2Own.path)
    const available = (Fs.existsSync(Path.join(parent, "cgroup.controllers"))
      ? Fs.readFileSync(Path.join(parent, "cgroup.controllers"), "utf8").trim().split(/\s+/)
      : []).filter((name) => (missing as ReadonlyArray<string>).includes(name)) as Array<Controller>
    const base = Path.join(parent, `${basePrefix}${process.pid}`)
    const enabled = available.filter((controller) => tryWrite(Path.join(parent, "cgroup.subtree_control"), `+${controller}`))
    if (enabled.length > 0) {
      try {
        Fs.mkdirSync(base, { recursive: true })
        const delegated = enabled.filter((controller) => tryWrite(Path.join(base, "cgroup.subtree_control"), `+${controller}`))
        if (delegated.length > 0) found.push({ version: 2, controllers: delegated, base })
      } catch (error) {
        failures.push(`cgroup v2: ${error instanceof Error ? error.message : String(error)}`)
      }
    }
  }
  if (found.length === 0) {
    return failures.length > 0 ? `no cgroup can be made (${failures.join("; ")})` : "no memory, cpu or pids cgroup controller is mounted"
  }
  for (const hierarchy of found) removeStale(Path.dirname(hierarchy.base))
  return found
}

/** The agents' cgroups of earlier Cairn processes that are gone (a cgroup is removed with rmdir, once empty). */
const removeStale = (parent: string) => {
  let names: Array<string>
  try {
    names = Fs.readdirSync(parent)
  } catch {
    return
  }
  for (const name of names) {
    const pid = stalePattern.exec(name)?.[1]
    if (pid === undefined || Number(pid) === process.pid || Fs.existsSync(`/proc/${pid}`)) continue
    const stale = Path.join(parent, name)
    try {
      for (const child of Fs.readdirSync(stale, { withFileTypes: true })) {
        if (child.isDirectory()) Fs.rmdirSync(Path.join(stale, child.name))
      }
      Fs.rmdirSync(stale)
    } catch {
      // Still in use after all; left for a later start.
    }
  }
}

/** Writes the agent's limits into its new cgroup in one hierarchy. */
const applyLimits = (hierarchy: Hierarchy, dir: string, limits: AgentLimits) => {
  const file = (name: string) => Path.join(dir, name)
  const quota = String(Math.max(1000, Math.round(limits.cpus * cfsPeriodUs)))
  for (const controller of hierarchy.controllers) {
    if (hierarchy.version === 1) {
      if (controller === "memory") {
        Fs.writeFileSync(file("memory.limit_in_bytes"), String(limits.memoryBytes))
        // Memory and swap together, where swap is accounted: otherwise an agent could page its excess out.
        tryWrite(file("memory.memsw.limit_in_bytes"), String(limits.memoryBytes))
      } else if (controller === "cpu") {
        Fs.writeFileSync(file("cpu.cfs_period_us"), String(cfsPeriodUs))
        Fs.writeFileSync(file("cpu.cfs_quota_us"), quota)
      } else if (controller === "pids") {
        Fs.writeFileSync(file("pids.max"), String(limits.pids))
      }
    } else if (controller === "memory") {
      Fs.writeFileSync(file("memory.max"), String(limits.memoryBytes))
      tryWrite(file("memory.swap.max"), "0")
    } else if (controller === "cpu") {
      Fs.writeFileSync(file("cpu.max"), `${quota} ${cfsPeriodUs}`)
    } else if (controller === "pids") {
      Fs.writeFileSync(file("pids.max"), String(limits.pids))
    }
  }
}

/** The agents' cgroups, or why they cannot be made here. */
export const make = (limits: AgentLimits): AgentCgroups | string => {
  const found = hierarchies()
  if (typeof found === "string") return found
  const enforced = (["memory", "cpu", "pids"] as const).filter((controller) => found.some((h) => h.controllers.includes(controller)))
  const dirOf = (hierarchy: Hierarchy, agent: string) => Path.join(hierarchy.base, nameOf(agent))
  const made = new Set<string>()
  const holding = (controller: Controller | "cpuacct") => found.find((h) => h.controllers.includes(controller))
  return {
    enforced,
    join: (agent) => {
      const name = nameOf(agent)
      if (!made.has(name)) {
        for (const hierarchy of found) {
          const dir = dirOf(hierarchy, agent)
          const fresh = !Fs.existsSync(dir)
          Fs.mkdirSync(dir, { recursive: true })
          if (fresh) applyLimits(hierarchy, dir, limits)
          else {
            try {
              // One this Cairn made before (the agent was destroyed and made again while it emptied).
              applyLimits(hierarchy, dir, limits)
            } catch {
              // Its limits stay as they were written.
            }
          }
        }
        made.add(name)
      }
      return found.map((hierarchy) => Path.join(dirOf(hierarchy, agent), "cgroup.procs"))
    },
    usage: (agent) => {
      if (!made.has(nameOf(agent))) return undefined
      const memory = holding("memory")
      const memoryDir = memory === undefined ? undefined : dirOf(memory, agent)
      const cpu = holding("cpuacct") ?? (holding("cpu")?.version === 2 ? holding("cpu") : undefined)
      const cpuDir = cpu === undefined ? undefined : dirOf(cpu, agent)
      const v1 = memory?.version === 1
      return {
        memoryBytes: memoryDir === undefined ? undefined : readNumber(Path.join(memoryDir, v1 ? "memory.usage_in_bytes" : "memory.current")),
        memoryPeakBytes: memoryDir === undefined ? undefined : readNumber(Path.join(memoryDir, v1 ? "memory.max_usage_in_bytes" : "memory.peak")),
        oomKills: memoryDir === undefined
          ? undefined
          : readKey(Path.join(memoryDir, v1 ? "memory.oom_control" : "memory.events"), "oom_kill"),
        cpuNanos: cpuDir === undefined
          ? undefined
          : cpu!.version === 1
          ? readNumber(Path.join(cpuDir, "cpuacct.usage"))
          : (readKey(Path.join(cpuDir, "cpu.stat"), "usage_usec") ?? NaN) * 1000
      }
    },
    remove: (agent) => {
      made.delete(nameOf(agent))
      for (const hierarchy of found) {
        const dir = dirOf(hierarchy, agent)
        if (Fs.existsSync(dir)) rmdirSoon(dir)
      }
    }
  }
}

const units: Record<string, number> = {
  "": 1, b: 1, k: 1024, kb: 1000, kib: 1024, m: 1024 ** 2, mb: 1000 ** 2, mib: 1024 ** 2, g: GiB, gb: 1000 ** 3,
  gib: GiB, t: 1024 ** 4, tb: 1000 ** 4, tib: 1024 ** 4
}

/** A size as configured: bytes (`4294967296`) or with a unit (`2GiB`, `512 MiB`, `1.5G`, `800MB`); undefined if not one. */
export const parseBytes = (text: string): number | undefined => {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text)
  const unit = units[match?.[2]?.toLowerCase() ?? "?"]
  if (match === null || unit === undefined) return undefined
  const bytes = Math.floor(Number(match[1]) * unit)
  return bytes > 0 ? bytes : undefined
}
