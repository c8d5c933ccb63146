/**
 * The AgentEngine contract for files operations (see ContractSection.ts): reading one workspace file within a size
 * cap, as the files download route does.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { AgentEngine } from "../AgentEngine.ts"
import type { SectionContext } from "./ContractSection.ts"

const encoder = new TextEncoder()
let counter = 0
/** A folder name no other case uses in the shared agent. */
const uniqueFolder = () => `files-contract-${Date.now().toString(36)}-${(counter++).toString(36)}`

export const filesContract = <R>({ it, sharedAgent, timeout }: SectionContext<R>): void => {
  it.effect("reads a workspace file within a size cap: Found up to the cap, TooLarge past it, without reading it", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* sharedAgent
      const folder = uniqueFolder()
      const text = "twelve bytes"
      const binary = new Uint8Array([0, 255, 128, 10, 13, 0xfe])
      yield* engine.writeWorkspaceFiles(agentId, [
        { path: `${folder}/notes.txt`, content: encoder.encode(text) },
        { path: `${folder}/data.bin`, content: binary },
        { path: `${folder}/empty.txt`, content: new Uint8Array() }
      ])

      const exact = yield* engine.readWorkspaceFileWithin(agentId, `${folder}/notes.txt`, 12)
      assert.strictEqual(exact._tag, "Found")
      if (exact._tag === "Found") assert.strictEqual(new TextDecoder().decode(exact.content), text)
      const roomy = yield* engine.readWorkspaceFileWithin(agentId, `${folder}/data.bin`, 1024)
      assert.strictEqual(roomy._tag, "Found")
      if (roomy._tag === "Found") assert.deepStrictEqual([...roomy.content], [...binary], "bytes are read as bytes")
      assert.deepStrictEqual(yield* engine.readWorkspaceFileWithin(agentId, `${folder}/notes.txt`, 11), { _tag: "TooLarge", size: 12 })
      assert.deepStrictEqual(yield* engine.readWorkspaceFileWithin(agentId, `${folder}/data.bin`, 0), { _tag: "TooLarge", size: 6 })
      const empty = yield* engine.readWorkspaceFileWithin(agentId, `${folder}/empty.txt`, 0)
      assert.strictEqual(empty._tag, "Found")
      if (empty._tag === "Found") assert.strictEqual(empty.content.length, 0)
    }), timeout)

  it.effect("reads no file where there is none, or where a folder is: Missing", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* sharedAgent
      const folder = uniqueFolder()
      yield* engine.writeWorkspaceFiles(agentId, [{ path: `${folder}/inner/file.txt`, content: encoder.encode("here") }])
      assert.deepStrictEqual(yield* engine.readWorkspaceFileWithin(agentId, `${folder}/absent.txt`, 1024), { _tag: "Missing" })
      assert.deepStrictEqual(yield* engine.readWorkspaceFileWithin(agentId, `${folder}/nowhere/absent.txt`, 1024), { _tag: "Missing" })
      assert.deepStrictEqual(yield* engine.readWorkspaceFileWithin(agentId, `${folder}/inner`, 1024), { _tag: "Missing" }, "a folder")
      assert.deepStrictEqual(yield* engine.readWorkspaceFileWithin(agentId, folder, 1024), { _tag: "Missing" }, "a folder")
    }), timeout)

  it.effect("refuses to read a capped file outside the workspace", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* sharedAgent
      for (const path of ["../openclaw.json", "notes/../../openclaw.json", "/etc/hostname", "", "..\\x"]) {
        const exit = yield* Effect.exit(engine.readWorkspaceFileWithin(agentId, path, 1024))
        assert.isTrue(exit._tag === "Failure", `reading ${JSON.stringify(path)} was not refused`)
      }
    }), timeout)
}
