/**
 * Installs an OpenClaw version ahead of time, with no server running (the CLI's `engine install`): the same install
 * (EngineVersions.ts) into the same engines directory, with the same progress lines, as the first agent of that
 * version would cause. By default, the version a server with the same configuration would give a new agent: the
 * newest one offered. With `compileCache`, the version's compile cache is filled too, as a server would at its next
 * use.
 */
import { Duration, Effect } from "effect"
import * as Path from "node:path"
import * as EngineVersions from "./EngineVersions.ts"
import * as HostEnvironment from "./HostEnvironment.ts"

export interface Options {
  /** Where engine versions are installed (`OPENCLAW_ENGINES_DIR`, `DATA_DIR/engines` by default). */
  readonly enginesDir: string
  /** The version to install; the newest one offered by default. It must be offered. */
  readonly version?: string
  /** The allowlist of versions offered (`OPENCLAW_VERSIONS`); by default only the latest stable release. */
  readonly versions?: ReadonlyArray<string>
  /** The Node that runs npm and the install scripts (`OPENCLAW_NODE`); the current one by default. */
  readonly nodePath?: string
  readonly npmPath?: string
  /** Where the progress lines go. */
  readonly report: (line: string) => Effect.Effect<void>
  readonly progressEvery?: Duration.Input
  /** Whether to fill the version's compile cache too (CompileCache.ts), if it is not there; off by default. */
  readonly compileCache?: boolean
}

export interface Installed {
  readonly version: string
  readonly dir: string
  /** Whether it was there already (nothing was downloaded). */
  readonly already: boolean
}

export const install = (options: Options) =>
  Effect.gen(function*() {
    const host = HostEnvironment.make(options.nodePath)
    const enginesDir = Path.resolve(options.enginesDir)
    const versions = EngineVersions.make({
      enginesDir,
      npmPath: options.npmPath ?? "npm",
      npmEnv: EngineVersions.npmEnvironment(host.baseEnv, host.path),
      allowlist: options.versions,
      report: options.report,
      announceAtOnce: true,
      ...(options.compileCache === true ? { compileCache: { nodePath: host.nodePath, baseEnv: host.baseEnv } } : {}),
      ...(options.progressEvery === undefined ? {} : { progressEvery: options.progressEvery })
    })
    const offered = yield* versions.list
    const version = options.version ?? offered[offered.length - 1]!
    yield* versions.checkOffered(version)
    const already = yield* versions.isInstalled(version)
    yield* versions.ensureInstalled(version)
    return { version, dir: Path.join(enginesDir, version), already } satisfies Installed
  })
