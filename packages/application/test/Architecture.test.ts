/**
 * The application package's shape, checked from its sources: its folders are floors in dependency order (a module
 * imports only from its own folder or the folders below it, so there is no import cycle), and the gateway owner is
 * the only module that drives the AgentEngine's lifecycle operations.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"

const src = Path.join(import.meta.dirname, "..", "src")

/** The folders from the bottom floor up; the root's own modules are the bottom, `Services.ts` and `index.ts` the top. */
const floors: ReadonlyArray<ReadonlyArray<string>> = [
  [".", "readmodels"],
  ["cluster"],
  ["secrets"],
  ["workspaces"],
  ["files"],
  ["skills"],
  ["templates"],
  ["gateway"],
  ["snapshots", "channels", "domains"],
  ["agents"],
  ["workspace"],
  ["audit"]
]
const top = new Set(["Services.ts", "index.ts"])

const modules = (Fs.readdirSync(src, { recursive: true }) as Array<string>)
  .filter((file) => file.endsWith(".ts"))
  .map((file) => file.split(Path.sep).join("/"))

const folderOf = (module: string) => (module.includes("/") ? module.slice(0, module.indexOf("/")) : ".")
const floorOf = (module: string) =>
  top.has(module) ? floors.length : floors.findIndex((folders) => folders.includes(folderOf(module)))

/** The modules of this package that `module` imports. */
const importsOf = (module: string): Array<string> => {
  const text = Fs.readFileSync(Path.join(src, module), "utf8")
  return [...text.matchAll(/from\s+"(\.{1,2}\/[^"]+)"/g)].map((match) =>
    Path.posix.normalize(Path.posix.join(Path.posix.dirname(module), match[1]!))
  )
}

describe("the application package", () => {
  it("has every folder on a floor", () => {
    for (const module of modules) assert.notStrictEqual(floorOf(module), -1, `${module} is in no floor of this test`)
  })

  it("imports only from the same folder or the floors below", () => {
    const upward = modules.flatMap((module) =>
      importsOf(module)
        .filter((imported) => folderOf(imported) !== folderOf(module) && floorOf(imported) >= floorOf(module))
        .map((imported) => `${module} -> ${imported}`)
    )
    assert.deepStrictEqual(upward, [])
  })

  it("has no import cycle between modules", () => {
    const graph = new Map(modules.map((module) => [module, importsOf(module)]))
    const done = new Set<string>()
    const cycles: Array<string> = []
    const visit = (module: string, path: ReadonlyArray<string>) => {
      if (path.includes(module)) return void cycles.push([...path.slice(path.indexOf(module)), module].join(" -> "))
      if (done.has(module)) return
      for (const next of graph.get(module) ?? []) visit(next, [...path, module])
      done.add(module)
    }
    for (const module of modules) visit(module, [])
    assert.deepStrictEqual(cycles, [])
  })

  it("drives gateways' lifecycles only through the gateway owner", () => {
    const lifecycle = /\bengine\.(provision|start|stop|restart|destroy|rotateGatewayToken|status)\(/
    const elsewhere = modules.filter((module) => module !== "gateway/Gateway.ts" && lifecycle.test(Fs.readFileSync(Path.join(src, module), "utf8")))
    assert.deepStrictEqual(elsewhere, [])
    // The check looks at what it should: the owner itself calls them.
    assert.isTrue(lifecycle.test(Fs.readFileSync(Path.join(src, "gateway/Gateway.ts"), "utf8")))
  })
})
