/**
 * For tests and benchmarks on real gateways (Linux only, read from /proc): the processes running in agents' homes,
 * that is gateways and their workers, with their memory, and the environment a gateway process was started with. A
 * gateway's workers inherit its working directory.
 */
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import { metaDirOf } from "../AgentHome.ts"
import { readPidRecord } from "../GatewayProcess.ts"

export interface GatewayProcess {
  readonly pid: number
  readonly name: string
  /** Resident set size, kB. */
  readonly rssKb: number
  /** Proportional set size, kB (shared pages split between the processes that share them). */
  readonly pssKb: number
}

const kbField = (text: string, field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(text)?.[1] ?? 0)

/** Every process whose working directory is `dir` or below it. */
export const processesUnder = (dir: string): Array<GatewayProcess> =>
  Fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).flatMap((pid) => {
    try {
      const cwd = Fs.readlinkSync(`/proc/${pid}/cwd`)
      if (cwd !== dir && !cwd.startsWith(`${dir}/`)) return []
      const status = Fs.readFileSync(`/proc/${pid}/status`, "utf8")
      return [{
        pid: Number(pid),
        name: /^Name:\s+(.*)$/m.exec(status)?.[1] ?? "?",
        rssKb: kbField(status, "VmRSS"),
        pssKb: kbField(Fs.readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"), "Pss")
      }]
    } catch {
      // Gone meanwhile, or not ours to read.
      return []
    }
  })

/** The environment a process was started with (/proc/<pid>/environ), or undefined when it is gone. */
export const environmentOfProcess = (pid: number): Record<string, string> | undefined => {
  try {
    const entries = Fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter((entry) => entry.length > 0)
    return Object.fromEntries(entries.map((entry) => {
      const at = entry.indexOf("=")
      return at < 0 ? [entry, ""] : [entry.slice(0, at), entry.slice(at + 1)]
    }))
  } catch {
    return undefined
  }
}

/** The pid the engine recorded for the agent's gateway (in Cairn's folder beside the home), whether or not it still runs. */
export const recordedGatewayPid = (home: string): number | undefined => readPidRecord(metaDirOf(home))?.pid

/** The pid of the gateway the engine runs from the agent's home (recorded in Cairn's folder for it), if one runs. */
export const gatewayPid = (home: string): number | undefined => {
  try {
    const pid = readPidRecord(metaDirOf(home))?.pid ?? 0
    // A pid left in a stale file may belong to another process by now: the gateway runs in the home.
    return Number.isSafeInteger(pid) && pid > 1 && Fs.readlinkSync(`/proc/${pid}/cwd`) === Fs.realpathSync(home) ? pid : undefined
  } catch {
    return undefined
  }
}

/** The environment the gateway running from the agent's home was started with; undefined when none runs. */
export const gatewayEnvironment = (home: string): Record<string, string> | undefined => {
  const pid = gatewayPid(home)
  return pid === undefined ? undefined : environmentOfProcess(pid)
}

/**
 * The network namespace of the gateway running from the agent's home, when it has one of its own (AgentNetwork.ts):
 * a path for `nsenter --net=`. Undefined when none runs, or it shares this process's network.
 */
export const gatewayNetworkPath = (home: string): string | undefined => {
  try {
    const own = Fs.readlinkSync("/proc/self/ns/net")
    for (const { pid } of processesUnder(Fs.realpathSync(home))) {
      try {
        if (Fs.readlinkSync(`/proc/${pid}/ns/net`) !== own) return `/proc/${pid}/ns/net`
      } catch {
        // Gone meanwhile.
      }
    }
  } catch {
    // No /proc, or no home.
  }
  return undefined
}

/** `file args` as run in the network of the agent's gateway (by `nsenter`, as root) where it has one of its own. */
export const inGatewayNetwork = (home: string, file: string, args: ReadonlyArray<string>): [string, Array<string>] => {
  const path = gatewayNetworkPath(home)
  return path === undefined ? [file, [...args]] : ["nsenter", [`--net=${path}`, "--", file, ...args]]
}

/** Whether the gateway running from the agent's home answers `/readyz` on `port` with 200, asked from its network. */
export const gatewayAnswersReady = (home: string, port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const script = `fetch("http://127.0.0.1:${port}/readyz").then((r) => console.log(r.status), () => console.log(0))`
    const [file, args] = inGatewayNetwork(home, process.execPath, ["-e", script])
    execFile(file, args, { timeout: 10_000 }, (_error, stdout) => resolve(stdout.trim() === "200"))
  })
