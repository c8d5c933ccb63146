/**
 * The port packages run unchanged on Node, Bun and Deno (docs/architecture.md, "Runtimes"), so the code their main
 * entry (`.`) reaches imports no Node module: an adapter that needs one lives in the package's `src/node/` (the
 * `/node` subpath export) or in a package of its own, and test fixtures in `src/testing/`. This walks each port
 * package's `src` outside those two folders and fails on any Node built-in it imports (`node:` or bare, static,
 * dynamic or re-exported), on any import of `node/` or `testing/` from there, which would pull them back into the
 * main entry, and on a package whose exports point `.` into them or `./node` anywhere else.
 */
import { assert, describe, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { builtinModules } from "node:module"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../../", import.meta.url))

/** The packages that hold ports (and their pure helpers and in-memory adapters). */
const portPackages = [
  "domain",
  "event-store",
  "content-store",
  "agent-engine",
  "auth",
  "signatures",
  "dns",
  "templates",
  "skill-hub"
]

const sourceFile = /\.(ts|mts|js|mjs)$/

/** Every source file under `dir`, except the `node/` and `testing/` folders at its top. */
const mainFiles = (dir: string, top = true): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return top && (entry.name === "node" || entry.name === "testing") ? [] : mainFiles(path, false)
    return sourceFile.test(entry.name) ? [path] : []
  })

// `from "x"` (imports and re-exports), `import "x"` and `import("x")`, `require("x")`.
const specifiers = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)["']([^"']+)["']/g

const builtins = new Set(builtinModules.map((name) => name.replace(/^node:/, "")))

const isNodeModule = (specifier: string) =>
  specifier.startsWith("node:") || builtins.has(specifier)

/** A relative import of the package's own `src/node/` or `src/testing/`, or another package's `/node` or `/testing`. */
const isOffLimits = (file: string, src: string, specifier: string) => {
  if (/^@cairn\/[^/]+\/(node|testing)(\/|$)/.test(specifier)) return true
  if (!specifier.startsWith(".")) return false
  const target = relative(src, join(file, "..", specifier))
  return /^(node|testing)(\/|$)/.test(target)
}

const problemsIn = (name: string): Array<string> => {
  const src = join(root, "packages", name, "src")
  return mainFiles(src).flatMap((file) =>
    readFileSync(file, "utf8").split("\n").flatMap((line, index) =>
      [...line.matchAll(specifiers)].flatMap(([, specifier]) => {
        const where = `${relative(root, file)}:${index + 1}`
        if (isNodeModule(specifier!)) return [`${where} imports ${specifier}`]
        if (isOffLimits(file, src, specifier!)) return [`${where} reaches ${specifier} from the main entry`]
        return []
      })
    )
  )
}

const exportsOf = (name: string): Record<string, string> =>
  JSON.parse(readFileSync(join(root, "packages", name, "package.json"), "utf8")).exports

describe("port packages", () => {
  for (const name of portPackages) {
    it(`@cairn/${name}'s main entry imports no Node module`, () => {
      assert.deepStrictEqual(problemsIn(name), [])
    })

    it(`@cairn/${name}'s exports keep "." out of src/node/ and testing/, and "./node" in src/node/`, () => {
      const exports = exportsOf(name)
      assert.notMatch(exports["."]!, /\/src\/(node|testing)\//)
      if (exports["./node"] !== undefined) assert.strictEqual(exports["./node"], "./src/node/index.ts")
    })
  }

  it("the walk finds what it looks for", () => {
    // The patterns themselves, on the lines they must catch and the ones they must let through.
    const caught = (line: string) => [...line.matchAll(specifiers)].map(([, specifier]) => specifier)
    assert.deepStrictEqual(caught(`import { join } from "node:path"`), ["node:path"])
    assert.deepStrictEqual(caught(`import type { webcrypto } from "node:crypto"`), ["node:crypto"])
    assert.deepStrictEqual(caught(`export * from "./node/LeafWriter.ts"`), ["./node/LeafWriter.ts"])
    assert.deepStrictEqual(caught(`const v8 = await import("node:v8")`), ["node:v8"])
    assert.deepStrictEqual(caught(`import "fs"`), ["fs"])
    assert.isTrue(isNodeModule("fs/promises"))
    assert.isTrue(isNodeModule("worker_threads"))
    assert.isFalse(isNodeModule("effect"))
    assert.isFalse(isNodeModule("multiformats/cid"))
    const src = join(root, "packages", "auth", "src")
    assert.isTrue(isOffLimits(join(src, "index.ts"), src, "./node/JoseTokenSigner.ts"))
    assert.isTrue(isOffLimits(join(src, "sub", "X.ts"), src, "../testing/index.ts"))
    assert.isTrue(isOffLimits(join(src, "X.ts"), src, "@cairn/dns/node"))
    assert.isFalse(isOffLimits(join(src, "X.ts"), src, "./TokenSigner.ts"))
    assert.isFalse(isOffLimits(join(src, "X.ts"), src, "@cairn/domain"))
  })
})
