/**
 * The Node that runs OpenClaw (gateways, the CLI, npm and the install scripts it runs) and the environment those
 * processes start from: the host's locale and user, and a PATH with that Node first. Shared by the adapter and by
 * installs made ahead of time (EngineInstall.ts), so both install with the same Node.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"

export interface HostEnvironment {
  readonly nodePath: string
  readonly path: string
  readonly baseEnv: NodeJS.ProcessEnv
}

export const make = (configuredNode: string | undefined): HostEnvironment => {
  // Under Bun or Deno, OpenClaw still runs on Node: the one on PATH (npm scripts put the project's Node 24 there).
  const runsOnNode = process.versions["bun"] === undefined && process.versions["deno"] === undefined
  const nodePath = configuredNode ?? (runsOnNode ? process.execPath : "node")
  // npm and OpenClaw's install scripts must run on the same (new enough) Node as the gateways.
  const path = Path.isAbsolute(nodePath)
    ? `${Path.dirname(nodePath)}${Path.delimiter}${process.env["PATH"] ?? ""}`
    : process.env["PATH"] ?? ""
  const passThrough = ["LANG", "LC_ALL", "TZ", "TMPDIR", "USER", "LOGNAME", "SHELL"]
  const baseEnv: NodeJS.ProcessEnv = {
    ...Object.fromEntries(passThrough.flatMap((name) => {
      const value = process.env[name]
      return value === undefined ? [] : [[name, value]]
    })),
    PATH: path
  }
  return { nodePath, path, baseEnv }
}

/** Where the program `name` is found on Cairn's PATH (an absolute path: agents' environments have PATHs of their own). */
export const onPath = (name: string): string | undefined =>
  (process.env["PATH"] ?? "").split(Path.delimiter).filter((dir) => Path.isAbsolute(dir))
    .map((dir) => Path.join(dir, name))
    .find((path) => {
      try {
        Fs.accessSync(path, Fs.constants.X_OK)
        return Fs.statSync(path).isFile()
      } catch {
        return false
      }
    })
