/**
 * For tests and benchmarks on real gateways (Linux only, read from /proc): the processes running in agents' homes,
 * that is gateways and their workers, with their memory. A gateway's workers inherit its working directory.
 */
import * as Fs from "node:fs"

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
