/**
 * Every installed package runs on the Node the project pins (the `node` package), the check `npm install` would
 * make if it ran on that Node. npm checks `engines` against the Node that runs npm itself, which may be an older
 * system Node; its warnings are then false alarms, so `.npmrc` hides them (loglevel=error, reasons there and in
 * docs/decisions/0022-npm-install-on-an-older-system-node.md) and this test makes the real check instead, from the
 * lockfile: a dependency that needs a newer Node than the pinned one fails here.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import semver from "semver"

const root = Path.resolve(import.meta.dirname, "../../..")
const lock = JSON.parse(Fs.readFileSync(Path.join(root, "package-lock.json"), "utf8")) as {
  readonly packages: Record<string, { readonly version?: string; readonly optional?: boolean; readonly engines?: unknown }>
}
const manifest = JSON.parse(Fs.readFileSync(Path.join(root, "package.json"), "utf8")) as {
  readonly dependencies: Record<string, string>
  readonly engines: { readonly node: string }
}
const pinned = lock.packages["node_modules/node"]?.version ?? ""

/** A package's `engines.node`; old packages sometimes give `engines` as an array, which npm ignores too. */
const nodeRange = (engines: unknown) =>
  typeof engines === "object" && engines !== null && !Array.isArray(engines) ? (engines as { node?: unknown }).node : undefined

describe("the pinned Node", () => {
  it("is the one the lockfile installs, within the range package.json pins and its own engines", () => {
    assert.isTrue(semver.satisfies(pinned, manifest.dependencies["node"] ?? ""), `${pinned} vs ${manifest.dependencies["node"]}`)
    assert.isTrue(semver.satisfies(pinned, manifest.engines.node), `${pinned} vs engines ${manifest.engines.node}`)
  })

  it("satisfies the engines range of every package npm installs", () => {
    const unsatisfied = Object.entries(lock.packages).flatMap(([path, entry]) => {
      const range = nodeRange(entry.engines)
      // npm skips an optional package whose engines do not match (it is never installed), so it cannot warn.
      if (typeof range !== "string" || entry.optional === true) return []
      return semver.satisfies(pinned, range) ? [] : [`${path === "" ? "(root)" : path} needs node ${range}`]
    })
    assert.deepStrictEqual(unsatisfied, [])
  })

  it("keeps npm install quiet on an older system Node: .npmrc still hides npm's false engine warnings", () => {
    const npmrc = Fs.readFileSync(Path.join(root, ".npmrc"), "utf8")
    assert.match(npmrc, /^engine-strict=false$/m)
    assert.match(npmrc, /^loglevel=error$/m)
  })
})
