/**
 * The server as one bundle (docs/operations.md "The server's bundle", decision 0030): loading ~1,550 modules one by one
 * is most of a warm start (docs/performance.md, "Start"); one bundled file (plus a few chunks for what loads lazily)
 * loads in about half the main thread's time. main.ts asks `fresh` for the bundle before it loads the server:
 * - The bundle lives in a cache directory (`CAIRN_BUNDLE_DIR`, else `node_modules/.cache/cairn-server` in the
 *   repository), with a manifest: every file it was built from, with its size and modification time.
 * - It is used only while every one of those files is unchanged (~1,600 `stat`s, a few ms): a source edited since,
 *   or a package installed (`node_modules/.package-lock.json` is one of the files), and the server starts from the
 *   sources, as it does when there is no bundle.
 * - A start from the sources builds the bundle for the next start once it is ready (`buildLater`): in a detached
 *   child process of the lowest priority (BundleBuild.ts), never on a start's path; `npm run build` builds it now.
 *   Without the bundler (an install without dev dependencies) the server always starts from the sources.
 * `CAIRN_BUNDLE=off` turns both off (the test suite sets it: tests run the sources). Only Node uses the bundle.
 *
 * No import here but Node's own: this module is loaded before the server, on every start.
 */
import { spawn } from "node:child_process"
import { readFileSync, statSync } from "node:fs"
import { setPriority } from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"

/** The repository's root (this file is apps/server-node/src/Bundle.ts). */
export const root = Path.resolve(import.meta.dirname, "../../..")

/**
 * What is bundled: the server (Server.ts), or the admin CLI (apps/cli/src/main.ts, whose every call is a process of
 * its own: `npm run cli` answers from its bundle in a fraction of the time the sources take, `npm run bench:cli`).
 */
export interface Target {
  readonly name: "server" | "cli"
  /** The module bundled, and its file in the bundle's folder. */
  readonly entry: string
  readonly entryFile: string
  /** Modules its entry point loads before the bundle: the bundle imports these very files (see `loadedFirst`). */
  readonly loadedFirst: ReadonlyArray<string>
  /** Where it is kept: this environment variable, else `node_modules/.cache/<cache>` in the repository. */
  readonly variable: string
  readonly cache: string
}

/** Modules main.ts loads before the server: the bundle imports these very files, so that both share one instance. */
export const loadedFirst = ["@cairn/event-store-pg/PgliteWorker", "@cairn/event-store-pg/PgliteArtifacts"]

export const server: Target = {
  name: "server",
  entry: Path.join(import.meta.dirname, "Server.ts"),
  entryFile: "server.mjs",
  loadedFirst,
  variable: "CAIRN_BUNDLE_DIR",
  cache: "cairn-server"
}

export const cli: Target = {
  name: "cli",
  entry: Path.join(root, "apps", "cli", "src", "main.ts"),
  entryFile: "cli.mjs",
  loadedFirst: [],
  variable: "CAIRN_CLI_BUNDLE_DIR",
  cache: "cairn-cli"
}

/** Where a target's bundle and its manifest are kept. */
export const directory = (target: Target = server): string =>
  process.env[target.variable] ?? Path.join(root, "node_modules", ".cache", target.cache)

/** The manifest's file in `directory()`: it names the current bundle's folder. */
export const manifestFile = "manifest.json"

/** What BundleBuild.ts writes beside a bundle. */
export interface Manifest {
  /** Its format; a bundle of another is not used. */
  readonly version: number
  /** The Node version it was built by. */
  readonly node: string
  /** The bundle's folder in `directory()`, and its entry module in that folder. */
  readonly folder: string
  readonly entry: string
  /** Every file the bundle depends on: absolute path, size, modification time (ms). */
  readonly inputs: ReadonlyArray<readonly [string, number, number]>
}

export const manifestVersion = 1

/** Whether starts use (and build) the bundle: on Node, unless `CAIRN_BUNDLE=off`. */
export const enabled = (): boolean =>
  process.env["CAIRN_BUNDLE"] !== "off" && process.versions["bun"] === undefined && process.versions["deno"] === undefined

/** Whether a manifest's inputs are all unchanged. */
export const unchanged = (manifest: Manifest): boolean => {
  if (manifest.version !== manifestVersion || manifest.node !== process.version) return false
  for (const [path, size, mtimeMs] of manifest.inputs) {
    const stat = statSync(path, { throwIfNoEntry: false })
    if (stat === undefined || stat.size !== size || stat.mtimeMs !== mtimeMs) return false
  }
  return true
}

/** The URL of the bundle's entry when there is one built from the files as they are now; else undefined. */
export const fresh = (target: Target = server): string | undefined => {
  if (!enabled()) return undefined
  let manifest: Manifest
  try {
    manifest = JSON.parse(readFileSync(Path.join(directory(target), manifestFile), "utf8"))
  } catch {
    return undefined
  }
  const entry = Path.join(directory(target), manifest.folder, manifest.entry)
  return statSync(entry, { throwIfNoEntry: false }) !== undefined && unchanged(manifest) ? pathToFileURL(entry).href : undefined
}

/** Whether the bundler is installed (it is a dev dependency). */
const bundlerInstalled = (): boolean => {
  try {
    import.meta.resolve("rolldown")
    return true
  } catch {
    return false
  }
}

/**
 * Builds the bundle for the next start in a detached child process at the lowest priority, which outlives this
 * one (a build takes a few seconds of CPU); nothing when bundles are off or the bundler is not installed. Its output
 * is not kept: a build that fails leaves the next start on the sources, as now.
 */
export const buildLater = (target: Target = server): void => {
  if (!enabled() || !bundlerInstalled()) return
  const child = spawn(process.execPath, [Path.join(import.meta.dirname, "BundleBuild.ts"), target.name], {
    detached: true,
    stdio: "ignore",
    env: { ...process.env, CAIRN_BUNDLE_QUIET: "1" }
  })
  child.on("error", () => {})
  try {
    if (child.pid !== undefined) setPriority(child.pid, 19)
  } catch {
    // Not allowed here: it runs at the normal priority.
  }
  child.unref()
}
