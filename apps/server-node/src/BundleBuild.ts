/**
 * Builds the server's bundle (Bundle.ts): Server.ts and everything it imports, Cairn's sources and the packages alike,
 * bundled by rolldown into one ES module, plus a chunk for each lazy `import()` (lazy modules stay lazy). `npm run
 * build` runs it; a start from the sources runs it in the background once ready. Without arguments it builds into
 * Bundle.directory() and makes it the current bundle; `build(directory)` is the same for a test.
 *
 * What the bundle must not change:
 * - Files found next to a module's own file (`import.meta.url`, `import.meta.dirname`, `import.meta.filename`,
 *   `import.meta.resolve(…)`: migrations, the docs page's script, the templates catalog, workers, PGlite's files)
 *   are found where they are: each module's `import.meta` is replaced by its original file's values, and
 *   `import.meta.resolve("package")` by what it resolves to from that file.
 * - Packages that load files of their own from `__dirname` (WebAssembly, native addons) and PGlite are not bundled:
 *   the bundle imports them from their absolute paths. So are the modules main.ts loads before the server
 *   (Bundle.loadedFirst), which must be the same instances the server uses.
 * - No file read while it changed: a file modified after the build began fails the build (nothing is replaced).
 */
import { mkdirSync, openSync, closeSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { setPriority } from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { type Plugin, rolldown } from "rolldown"
import * as Bundle from "./Bundle.ts"

/** Modules not bundled, by their resolved path: PGlite (WebAssembly and data files beside its modules). */
const unbundledPackages = [/\/node_modules\/@electric-sql\/pglite\//]

/** Whether a package module finds files by `__dirname`/`__filename` (CommonJS), so must stay where it is. */
const usesItsDirectory = (path: string): boolean => {
  if (!path.includes("/node_modules/")) return false
  if (path.endsWith(".node")) return true
  const code = readFileSync(path, "utf8")
  return /\b__(dirname|filename)\b/.test(code) && !code.includes("import.meta")
}

const literal = (value: string) => JSON.stringify(value)

/**
 * Keeps every module's `import.meta` its own, and leaves out what must not be bundled (see above). `resolved`
 * collects the files `import.meta.resolve` and the unbundled modules stand for, which the manifest records too.
 */
const cairnPlugin = (entry: string, loadedFirst: ReadonlySet<string>, resolved: Set<string>): Plugin => ({
  name: "cairn-server-bundle",
  async resolveId(source, importer, options) {
    if (source.startsWith("node:") || source.startsWith("\0")) return null
    const resolution = await this.resolve(source, importer, { ...options, skipSelf: true })
    if (resolution === null || resolution.external || !Path.isAbsolute(resolution.id)) return resolution
    const { id } = resolution
    if (loadedFirst.has(id) || unbundledPackages.some((pattern) => pattern.test(id)) || usesItsDirectory(id)) {
      resolved.add(id)
      return { id, external: true }
    }
    return resolution
  },
  transform: {
    filter: { code: { include: [/import\.meta/] } },
    async handler(code, module) {
      // rolldown's own runtime (`\0rolldown/runtime.js`) makes the `require` of bundled CommonJS modules from its
      // `import.meta.url`: they resolve as from Server.ts, wherever the bundle is kept.
      const id = module.startsWith("\0") ? entry : module
      let out = code
      for (const [call, specifier] of code.matchAll(/import\.meta\.resolve\(\s*("[^"\n]+"|'[^'\n]+')\s*\)/g)) {
        const target = await this.resolve(specifier!.slice(1, -1), id, { kind: "import-statement" })
        if (target === null || !Path.isAbsolute(target.id)) throw new Error(`${id}: cannot resolve ${call}`)
        resolved.add(target.id)
        out = out.replaceAll(call, literal(pathToFileURL(target.id).href))
      }
      if (/import\.meta\.resolve\b/.test(out)) throw new Error(`${id}: import.meta.resolve of a computed specifier`)
      out = out
        .replaceAll("import.meta.url", literal(pathToFileURL(id).href))
        .replaceAll("import.meta.dirname", literal(Path.dirname(id)))
        .replaceAll("import.meta.filename", literal(id))
      return { code: out }
    }
  }
})

/**
 * The modules main.ts loads before the server (Bundle.loadedFirst) and what they import (the relative, not type-only
 * imports of Cairn's sources): left out of the bundle, so that the server shares main.ts's instances of them.
 */
const sharedWithMain = (target: Bundle.Target): Set<string> => {
  const shared = new Set<string>()
  const visit = (file: string) => {
    if (shared.has(file)) return
    shared.add(file)
    const code = readFileSync(file, "utf8")
    for (const [, specifier] of code.matchAll(/^(?:import|export)\s+(?!type\b)(?:[^'"]*?\sfrom\s+)?"(\.{1,2}\/[^"]+)"/gm)) {
      visit(Path.resolve(Path.dirname(file), specifier!))
    }
  }
  for (const specifier of target.loadedFirst) visit(new URL(import.meta.resolve(specifier)).pathname)
  return shared
}

/** Size and modification time of each file, as the manifest keeps them; undefined for one that is gone. */
const stats = (paths: Iterable<string>) =>
  [...paths].map((path) => {
    const stat = statSync(path, { throwIfNoEntry: false })
    return stat === undefined ? undefined : ([path, stat.size, stat.mtimeMs] as const)
  })

/** The package.json of the workspace a Cairn source file belongs to (its exports map decides imports too). */
const workspaceManifest = (path: string): string | undefined => {
  const relative = Path.relative(Bundle.root, path)
  const [top, name] = relative.split(Path.sep)
  return (top === "packages" || top === "apps" || top === "examples") && name !== undefined
    ? Path.join(Bundle.root, top, name, "package.json")
    : undefined
}

/** A file changed while the bundle was built (an editor saving, a checkout): the bundle is not used. */
class ChangedWhileBuilt extends Error {}

/**
 * Builds the bundle into `directory` and makes it the current one there (its manifest replaced in one rename).
 * Returns the manifest. A build during which a file changed is done again, three times at most.
 */
export const build = async (directory: string, target: Bundle.Target = Bundle.server): Promise<Bundle.Manifest> => {
  for (let attempt = 1;; attempt++) {
    try {
      return await buildOnce(directory, target)
    } catch (error) {
      if (!(error instanceof ChangedWhileBuilt) || attempt === 3) throw error
      await new Promise((resolve) => setTimeout(resolve, 2_000))
    }
  }
}

const buildOnce = async (directory: string, target: Bundle.Target): Promise<Bundle.Manifest> => {
  // Files changed from here on may have been read either way. Some file systems keep seconds only.
  const began = Date.now() - 2_000
  const loadedFirst = sharedWithMain(target)
  const resolved = new Set<string>()
  const bundle = await rolldown({
    input: target.entry,
    platform: "node",
    cwd: Bundle.root,
    external: [/^node:/],
    makeAbsoluteExternalsRelative: false,
    logLevel: "silent",
    plugins: [cairnPlugin(target.entry, loadedFirst, resolved)]
  })
  const folder = `bundle-${Date.now()}-${process.pid}`
  mkdirSync(directory, { recursive: true })
  const output = await bundle.write({
    dir: Path.join(directory, folder),
    format: "esm",
    entryFileNames: target.entryFile,
    chunkFileNames: "[name]-[hash].mjs",
    // All ASCII (non-ASCII characters escaped, JSDoc comments, where most of them were, left out): an ASCII
    // source is read into a one-byte string, in about half the time (docs/performance.md, "bench:startup").
    charset: "ascii",
    comments: { legal: true, annotation: true, jsdoc: false }
  })
  await bundle.close()
  const inputs = new Set<string>([import.meta.filename, Path.join(import.meta.dirname, "Bundle.ts"), ...resolved])
  const lock = Path.join(Bundle.root, "node_modules", ".package-lock.json")
  if (statSync(lock, { throwIfNoEntry: false }) !== undefined) inputs.add(lock)
  for (const file of output.output) {
    if (file.type !== "chunk") continue
    for (const id of file.moduleIds) {
      if (!Path.isAbsolute(id)) continue
      inputs.add(id)
      const workspace = workspaceManifest(id)
      if (workspace !== undefined) inputs.add(workspace)
    }
  }
  const recorded = stats([...inputs].sort())
  const changed = recorded.find((input) => input === undefined || input[2] >= began)
  if (changed !== undefined) {
    rmSync(Path.join(directory, folder), { recursive: true, force: true })
    throw new ChangedWhileBuilt(`a file changed while the bundle was built${changed ? `: ${changed[0]}` : ""}; not used`)
  }
  const manifest: Bundle.Manifest = {
    version: Bundle.manifestVersion,
    node: process.version,
    folder,
    entry: target.entryFile,
    inputs: recorded.filter((input) => input !== undefined)
  }
  const temporary = Path.join(directory, `${Bundle.manifestFile}.${process.pid}`)
  writeFileSync(temporary, JSON.stringify(manifest))
  renameSync(temporary, Path.join(directory, Bundle.manifestFile))
  prune(directory, folder)
  return manifest
}

/**
 * Removes older bundles but the two newest before `current`: a server started from one may still load its lazy
 * chunks (a start from the sources builds a new one as soon as it is ready).
 */
const prune = (directory: string, current: string) => {
  const older = readdirSync(directory)
    .filter((name) => name.startsWith("bundle-") && name !== current)
    .sort((a, b) => Number(b.split("-")[1]) - Number(a.split("-")[1]))
  for (const name of older.slice(2)) rmSync(Path.join(directory, name), { recursive: true, force: true })
}

/** One build at a time per directory: a lock file, taken over when older than ten minutes (a build that died). */
const locked = async <A>(directory: string, body: () => Promise<A>): Promise<A | undefined> => {
  mkdirSync(directory, { recursive: true })
  const lock = Path.join(directory, "building")
  const stale = statSync(lock, { throwIfNoEntry: false })
  if (stale !== undefined && Date.now() - stale.mtimeMs > 600_000) rmSync(lock, { force: true })
  let fd: number
  try {
    fd = openSync(lock, "wx")
  } catch {
    return undefined
  }
  closeSync(fd)
  try {
    return await body()
  } finally {
    rmSync(lock, { force: true })
  }
}

// `BundleBuild.ts [server|cli]`: that target's bundle; both without one (`npm run build`).
if (import.meta.main) {
  const quiet = process.env["CAIRN_BUNDLE_QUIET"] === "1"
  if (quiet) setPriority(19)
  const named = process.argv[2]
  const targets = named === undefined ? [Bundle.server, Bundle.cli] : [Bundle.server, Bundle.cli].filter((t) => t.name === named)
  for (const target of targets) {
    const directory = Bundle.directory(target)
    const started = performance.now()
    try {
      const manifest = await locked(directory, () => build(directory, target))
      if (!quiet) {
        console.log(
          manifest === undefined
            ? `another build is running in ${directory}`
            : `${target.name} bundle built in ${((performance.now() - started) / 1000).toFixed(1)} s: ${
              Path.join(directory, manifest.folder, manifest.entry)
            }, ${manifest.inputs.length} files`
        )
      }
    } catch (error) {
      if (!quiet) {
        console.error(error)
        process.exitCode = 1
      }
    }
  }
}
