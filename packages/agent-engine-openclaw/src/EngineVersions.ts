/**
 * OpenClaw versions: which ones are offered (stable releases on the npm registry, narrowed by an allowlist, cached
 * for an hour; the versions installed here when the registry cannot be reached) and their installs, one shared `<enginesDir>/<version>` per version, made on first use.
 * Each install also gets the channel plugins OpenClaw would otherwise fetch from npm when a channel is first used
 * (`@openclaw/slack`, `@openclaw/discord`, `@openclaw/whatsapp` at the engine's exact version, features §10), in
 * `<enginesDir>/<version>/channel-plugins`; an install made before that gets them added at its next use.
 * An install is hundreds of MB and takes about a minute: while it runs, a line every few seconds says how far it is
 * (the size of its directory on disk, `du -sk`: npm's own output has no byte counts), and `installing` tells the same
 * to whoever asks (an agent's provisioning status).
 * Then, given `compileCache`, Cairn fills the version's Node compile cache (CompileCache.ts) by starting one gateway
 * of it, outside any sandbox; an install made before that gets it at its next use.
 */
import { EngineUnavailable, EngineVersion, VersionNotOffered } from "@cairn/agent-engine"
import { Deferred, Duration, Effect, Exit, Metric } from "effect"
import * as FsSync from "node:fs"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { pathExists, runCommand } from "./Command.ts"
import * as CompileCache from "./CompileCache.ts"
import * as EngineMetrics from "./EngineMetrics.ts"

/** Stable CalVer releases only: `2026.9.6`, not `2026.9.1-beta.1` nor `2026.7.1-2`. */
const stableVersion = /^\d{4}\.\d{1,2}\.\d{1,2}$/

export interface EngineVersionsOptions {
  readonly enginesDir: string
  readonly npmPath: string
  /** npm keeps the host's environment: its config (~/.npmrc, npm_config_*, proxies) says how to reach the registry. */
  readonly npmEnv: NodeJS.ProcessEnv
  /** The versions offered; by default only the latest stable release. */
  readonly allowlist: ReadonlyArray<string> | undefined
  /** Where the progress lines of installs go: the log (info) by default; the CLI prints them. */
  readonly report?: (line: string) => Effect.Effect<void>
  /**
   * How often an install under way says how far it is; 5 seconds by default. An install is announced at its first
   * report (one done sooner says nothing), or at once with `announceAtOnce` (the CLI, whose user is waiting for it).
   */
  readonly progressEvery?: Duration.Input
  readonly announceAtOnce?: boolean
  /** Fill each version's compile cache after its install (CompileCache.ts); no cache when not given. */
  readonly compileCache?: CompileCache.Options
}

/** An install under way: of which version, what part of it, since when, and how much is on disk. */
export interface InstallProgress {
  readonly version: string
  readonly part: "engine" | "channel plugins"
  readonly startedAt: number
  /** Bytes in the install's directory at the last measure; undefined before the first (or where `du` is missing). */
  installedBytes: number | undefined
}

/**
 * The environment npm runs in: `base` plus what npm needs (home, cache, registry and proxy settings), never Cairn's
 * own configuration (DATABASE_URL, SECRETS_MASTER_KEY, ADMIN_TOKEN, …): npm runs third-party install scripts.
 */
export const npmEnvironment = (base: NodeJS.ProcessEnv, path: string): NodeJS.ProcessEnv => ({
  ...base,
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) =>
    /^(?:HOME|XDG_(?:CACHE|CONFIG)_HOME|(?:HTTPS?|NO)_PROXY|NODE_EXTRA_CA_CERTS|SSL_CERT_FILE)$/i.test(name) || /^npm_config_/i.test(name)
  )),
  PATH: path
})

/** The bytes under `dir` (`du -sk`: 40k files in a fraction of the CPU a walk in Node takes); undefined when unknown. */
export const diskUsage = async (dir: string, env: NodeJS.ProcessEnv): Promise<number | undefined> => {
  // Files npm moves while du runs make it complain and exit 1; its total is still good.
  const result = await runCommand("du", ["-sk", dir], { env, timeoutMs: 30_000 }).catch(() => undefined)
  const kib = Number(/^(\d+)/.exec(result?.stdout ?? "")?.[1])
  return Number.isFinite(kib) ? kib * 1024 : undefined
}

const megabytes = (bytes: number | undefined) => bytes === undefined ? "" : `${Math.round(bytes / 1e6)} MB`
const seconds = (ms: number) => `${Math.round(ms / 1000)} s`

export const make = (options: EngineVersionsOptions) => {
  const { enginesDir, npmPath, npmEnv } = options
  const report = options.report ?? ((line: string) => Effect.logInfo(line))
  const progressEvery = Duration.fromInputUnsafe(options.progressEvery ?? "5 seconds")

  const installDir = (version: string) => Path.join(enginesDir, version)
  /** The CLI entry point of an installed version. */
  const entryFile = (version: string) => Path.join(installDir(version), "node_modules", "openclaw", "openclaw.mjs")

  /** Where the version's channel plugins are installed (their peer `openclaw` resolves to the version's own, above). */
  const pluginsDir = (version: string) => Path.join(installDir(version), "channel-plugins")
  const pluginPackages = ["slack", "discord", "whatsapp"] as const
  /** The folder OpenClaw loads a channel's plugin from (`plugins.load.paths`). */
  const pluginPath = (version: string, channel: string) => Path.join(pluginsDir(version), "node_modules", "@openclaw", channel)

  const offered = (versions: ReadonlyArray<string>) => {
    const stable = versions.filter((v) => stableVersion.test(v)).sort(EngineVersion.order)
    if (options.allowlist === undefined) return stable.slice(-1)
    const allowed = new Set(options.allowlist)
    return stable.filter((v) => allowed.has(v))
  }

  const fromRegistry = Effect.tryPromise({
    try: async () => {
      const result = await runCommand(npmPath, ["view", "openclaw", "versions", "--json"], { env: npmEnv, timeoutMs: 60_000 })
      if (result.code !== 0) throw new Error(`npm view openclaw versions failed: ${result.stderr.trim()}`)
      const all = JSON.parse(result.stdout) as unknown
      if (!Array.isArray(all)) throw new Error("npm view openclaw versions: unexpected output")
      const versions = offered(all.filter((v): v is string => typeof v === "string"))
      // An allowlist that matches nothing on the registry is a configuration error: say so rather than offer nothing.
      if (versions.length === 0) throw new Error(`none of the allowed versions (${options.allowlist?.join(", ")}) is on the registry`)
      return versions
    },
    catch: (cause) => new EngineUnavailable({ cause })
  })

  /** The versions installed here already: what can still run when the registry cannot be reached. */
  const installed = Effect.promise(async () => {
    const names = await Fs.readdir(enginesDir).catch(() => [] as Array<string>)
    const present = await Promise.all(names.map(async (name) => (await pathExists(entryFile(name))) ? [name] : []))
    return offered(present.flat())
  })

  // The registry's list is kept for an hour. When it cannot be reached, the last list (or else the installed
  // versions) serves for a few minutes before the registry is asked again.
  const freshFor = 60 * 60_000
  const fallbackFor = 5 * 60_000
  let cache: { readonly versions: ReadonlyArray<string>; readonly until: number } | undefined
  const remember = (versions: ReadonlyArray<string>, forMs: number) => Effect.sync(() => void (cache = { versions, until: Date.now() + forMs }))

  /** The offered versions, oldest first. */
  const list: Effect.Effect<ReadonlyArray<string>, EngineUnavailable> = Effect.suspend(() => {
    if (cache !== undefined && Date.now() < cache.until) return Effect.succeed(cache.versions)
    return fromRegistry.pipe(
      Effect.tap((versions) => remember(versions, freshFor)),
      Effect.catch((unreachable) =>
        Effect.gen(function*() {
          const fallback = cache?.versions ?? (yield* installed)
          if (fallback.length === 0) return yield* unreachable
          // The reason, not a stack trace: being offline is an expected condition (and the CLI prints this line too).
          const reason = unreachable.cause instanceof Error ? unreachable.cause.message : String(unreachable.cause)
          yield* Effect.logWarning(`The npm registry cannot be reached; offering the engine versions known here (${reason.split("\n")[0]})`)
          yield* remember(fallback, fallbackFor)
          return fallback
        })
      )
    )
  })

  const checkOffered = (version: string) =>
    Effect.flatMap(list, (versions) => versions.includes(version) ? Effect.void : Effect.fail(new VersionNotOffered({ version })))

  /** Installs under way, by version. */
  const underWay = new Map<string, InstallProgress>()
  const isInstalled = (version: string) => Effect.promise(() => pathExists(entryFile(version)))

  /**
   * Runs one part of a version's install, reporting at its start, every `progressEvery` while it runs (the size of
   * `measured` on disk), and at its end.
   */
  const withProgress = <E>(version: string, part: InstallProgress["part"], dir: string, measured: string, work: Effect.Effect<void, E>) =>
    Effect.gen(function*() {
      const progress: InstallProgress = { version, part, startedAt: Date.now(), installedBytes: undefined }
      const what = part === "engine" ? `OpenClaw ${version}` : `the channel plugins of OpenClaw ${version}`
      const elapsed = () => seconds(Date.now() - progress.startedAt)
      const intro = part === "engine"
        ? `Installing ${what} from the npm registry into ${dir} (about 650 MB, once per version)`
        : `Installing ${what} from the npm registry`
      // An install done before the first tick (a stand-in npm, a version raced in by another process) says nothing.
      let announced = false
      const announce = Effect.suspend(() => {
        if (announced) return Effect.void
        announced = true
        return report(intro)
      })
      const tick = Effect.promise(() => diskUsage(measured, npmEnv)).pipe(
        Effect.tap((bytes) => Effect.sync(() => void (progress.installedBytes = bytes ?? progress.installedBytes))),
        // npm first resolves the dependency tree (half a minute of registry requests, nothing on disk), then unpacks.
        Effect.andThen(() => announce),
        Effect.andThen(() => {
          const onDisk = progress.installedBytes === undefined ? "" : progress.installedBytes < 1e6 ? "resolving dependencies" : megabytes(progress.installedBytes)
          return report(`Installing ${what}: ${[onDisk, elapsed()].filter((p) => p !== "").join(", ")}`)
        })
      )
      underWay.set(version, progress)
      if (options.announceAtOnce === true) yield* announce
      // The ticker never ends on its own: the work wins the race and the ticker is interrupted (which it may be,
      // even inside the uninterruptible install).
      const ticker = Effect.interruptible(Effect.forever(Effect.sleep(progressEvery).pipe(Effect.andThen(tick))))
      yield* Effect.raceFirst(work, ticker).pipe(
        Effect.ensuring(Effect.sync(() => void underWay.delete(version))),
        Effect.tapError(() => announced ? report(`The install of ${what} failed after ${elapsed()}`) : Effect.void),
        // The engine's own install time is what `cairn_engine_install_duration_seconds` (on /metrics) observes.
        Effect.tap(() => part === "engine" ? Metric.update(EngineMetrics.installDuration, (Date.now() - progress.startedAt) / 1000) : Effect.void),
        Effect.andThen(() =>
          announced
            ? Effect.promise(() => diskUsage(dir, npmEnv)).pipe(
              Effect.flatMap((bytes) => report(`Installed ${what}: ${[megabytes(bytes), `in ${elapsed()}`].filter((p) => p !== "").join(" ")}`))
            )
            : Effect.void
        )
      )
    })

  const install = (version: string) =>
    Effect.gen(function*() {
      if (yield* isInstalled(version)) return
      // Install beside the target and rename, so a half-finished install is never taken for a good one.
      const staging = `${installDir(version)}.installing-${process.pid}-${Date.now().toString(36)}`
      yield* withProgress(version, "engine", installDir(version), staging, Effect.tryPromise({
        try: async () => {
          await Fs.mkdir(staging, { recursive: true })
          try {
            const result = await runCommand(
              npmPath,
              ["install", "--prefix", staging, `openclaw@${version}`, "--no-audit", "--no-fund", "--loglevel=error"],
              { env: npmEnv, timeoutMs: 15 * 60_000 }
            )
            if (result.code !== 0) throw new Error(`npm install openclaw@${version} failed: ${result.stderr.trim()}`)
            await Fs.rename(staging, installDir(version)).catch(async (error) => {
              // Another Cairn process sharing the engines dir may have won the race: theirs is as good as ours.
              if (!(await pathExists(entryFile(version)))) throw error
            })
          } finally {
            await Fs.rm(staging, { recursive: true, force: true })
          }
        },
        catch: (cause) => new EngineUnavailable({ cause })
      }))
    })

  /** One install per version at a time: concurrent requests for one version wait on the same Deferred. */
  const installs = new Map<string, Deferred.Deferred<void, EngineUnavailable>>()
  const ensureInstalled = (version: string): Effect.Effect<void, EngineUnavailable> =>
    Effect.suspend(() => {
      const running = installs.get(version)
      if (running !== undefined) return Deferred.await(running)
      const done = Deferred.makeUnsafe<void, EngineUnavailable>()
      installs.set(version, done)
      return install(version).pipe(
        Effect.onExit((exit) =>
          Effect.sync(() => {
            // Forget failures so a later call retries; keep successes (the check on disk is cheap anyway).
            if (exit._tag === "Failure") installs.delete(version)
          }).pipe(Effect.andThen(Deferred.done(done, exit)))
        ),
        Effect.uninterruptible
      )
    })

  const pluginsPresent = async (version: string) =>
    (await Promise.all(pluginPackages.map((name) => pathExists(Path.join(pluginPath(version, name), "package.json"))))).every(Boolean)

  /**
   * Installs the channel plugins of an installed version, staged beside their folder and renamed into place, so a
   * half-finished install is never taken for a good one. `--legacy-peer-deps`: their peer dependency is the
   * `openclaw` already installed above them, which Node finds by walking up; npm would otherwise install a second one.
   */
  const installPlugins = (version: string) =>
    Effect.gen(function*() {
      if (yield* Effect.promise(() => pluginsPresent(version))) return
      const staging = `${pluginsDir(version)}.installing-${process.pid}-${Date.now().toString(36)}`
      yield* withProgress(version, "channel plugins", pluginsDir(version), staging, Effect.tryPromise({
        try: async () => {
          await Fs.mkdir(staging, { recursive: true })
          try {
            const result = await runCommand(
              npmPath,
              ["install", "--prefix", staging, ...pluginPackages.map((name) => `@openclaw/${name}@${version}`), "--legacy-peer-deps", "--no-audit",
                "--no-fund", "--loglevel=error"],
              { env: npmEnv, timeoutMs: 15 * 60_000 }
            )
            if (result.code !== 0) throw new Error(`npm install of the channel plugins ${version} failed: ${result.stderr.trim()}`)
            await Fs.rm(pluginsDir(version), { recursive: true, force: true })
            await Fs.rename(staging, pluginsDir(version)).catch(async (error) => {
              if (!(await pluginsPresent(version))) throw error
            })
          } finally {
            await Fs.rm(staging, { recursive: true, force: true })
          }
        },
        catch: (cause) => new EngineUnavailable({ cause })
      }))
    })

  /**
   * One plugin install per version at a time. A failure is remembered for a few minutes (npm can take a minute to
   * give up on an unreachable registry: starts must not pay that each time), then the next call tries again.
   */
  const pluginInstalls = new Map<string, Deferred.Deferred<void, EngineUnavailable>>()
  const pluginFailures = new Map<string, { readonly until: number; readonly error: EngineUnavailable }>()
  const ensurePlugins = (version: string): Effect.Effect<void, EngineUnavailable> =>
    Effect.suspend(() => {
      const running = pluginInstalls.get(version)
      if (running !== undefined) return Deferred.await(running)
      const failed = pluginFailures.get(version)
      if (failed !== undefined && Date.now() < failed.until) return Effect.fail(failed.error)
      const done = Deferred.makeUnsafe<void, EngineUnavailable>()
      pluginInstalls.set(version, done)
      return installPlugins(version).pipe(
        Effect.tapError((error) => Effect.sync(() => void pluginFailures.set(version, { until: Date.now() + fallbackFor, error }))),
        Effect.onExit((exit) => Effect.sync(() => void pluginInstalls.delete(version)).pipe(Effect.andThen(Deferred.done(done, exit)))),
        Effect.uninterruptible
      )
    })

  /**
   * The engine and its channel plugins. A plugin install that fails (no registry) is logged and does not keep the
   * engine from running: only a channel needing the plugin then fails, and asks again (`ensurePlugins`).
   */
  const ensureInstalledWithPlugins = (version: string): Effect.Effect<void, EngineUnavailable> =>
    ensureInstalled(version).pipe(
      Effect.andThen(ensurePlugins(version).pipe(
        Effect.catch((error) => Effect.logWarning(`The channel plugins of OpenClaw ${version} could not be installed; Slack, Discord and WhatsApp need them`, error.cause))
      )),
      Effect.andThen(ensureCompileCache(version))
    )

  /**
   * One fill of a version's compile cache at a time. A fill that fails is logged and remembered for a few minutes
   * (gateways start without the cache meanwhile), then the next start tries again.
   */
  const cacheFills = new Map<string, Deferred.Deferred<void>>()
  const cacheFailures = new Map<string, number>()
  const ensureCompileCache = (version: string): Effect.Effect<void> =>
    Effect.suspend(() => {
      const cacheOptions = options.compileCache
      if (cacheOptions === undefined) return Effect.void
      if (FsSync.existsSync(CompileCache.cacheDir(installDir(version), cacheOptions.nodePath))) return Effect.void
      const running = cacheFills.get(version)
      if (running !== undefined) return Deferred.await(running)
      if (Date.now() < (cacheFailures.get(version) ?? 0)) return Effect.void
      const done = Deferred.makeUnsafe<void>()
      cacheFills.set(version, done)
      const startedAt = Date.now()
      return report(`Filling the compile cache of OpenClaw ${version} (one gateway start, once per version)`).pipe(
        Effect.andThen(CompileCache.fill(cacheOptions, installDir(version), entryFile(version))),
        Effect.andThen(() => report(`Filled the compile cache of OpenClaw ${version} in ${seconds(Date.now() - startedAt)}`)),
        Effect.catch((error) =>
          Effect.sync(() => void cacheFailures.set(version, Date.now() + fallbackFor)).pipe(
            Effect.andThen(Effect.logWarning(`The compile cache of OpenClaw ${version} could not be filled (${error.message}); its gateways start without it`))
          )
        ),
        Effect.onExit(() => Effect.sync(() => void cacheFills.delete(version)).pipe(Effect.andThen(Deferred.done(done, Exit.void)))),
        Effect.uninterruptible
      )
    })

  /** The environment a gateway of `version` reads its compile cache with; empty while there is none. */
  const compileCacheEnv = (version: string): NodeJS.ProcessEnv =>
    options.compileCache === undefined ? {} : CompileCache.environment(CompileCache.cacheDir(installDir(version), options.compileCache.nodePath))

  /** The install of `version` under way (its engine, or then its channel plugins), if one is. */
  const installing = (version: string): InstallProgress | undefined => underWay.get(version)

  return { list, checkOffered, entryFile, isInstalled, installing, ensureInstalled: ensureInstalledWithPlugins, ensurePlugins, pluginPath, compileCacheEnv }
}

export type EngineVersions = ReturnType<typeof make>
