import { assert, describe, it } from "@effect/vitest"
import { Stream } from "effect"
import type { RestoreEntry } from "../../src/WorkspaceTree.ts"
import * as WorkspaceStore from "../../src/simulated/WorkspaceStore.ts"

const bytes = (text: string) => new TextEncoder().encode(text)
const fingerprintOf = (store: WorkspaceStore.WorkspaceStore, path: string) =>
  store.scan(() => false).find((entry) => entry.path === path)?.fingerprint
const file = (path: string, mode: number, unchangedIf?: string): RestoreEntry => ({
  path,
  kind: "file",
  mode,
  content: Stream.die(new Error("not read here")),
  ...(unchangedIf === undefined ? {} : { unchangedIf })
})

describe("WorkspaceStore", () => {
  it("gives a file a new fingerprint whenever its content is replaced, by any operation, even with the same bytes", () => {
    const store = new WorkspaceStore.WorkspaceStore()
    store.writeFile("a.txt", bytes("same"), 0o644)
    const seen = new Set([fingerprintOf(store, "a.txt")])
    assert.strictEqual(fingerprintOf(store, "a.txt"), [...seen][0], "a scan changed it")
    store.writeFile("a.txt", bytes("same"), 0o644)
    seen.add(fingerprintOf(store, "a.txt"))
    store.editFile("a.txt", bytes("same"))
    seen.add(fingerprintOf(store, "a.txt"))
    const plan = store.plan([file("a.txt", 0o644)], () => false)
    store.restore(plan, new Map([["a.txt", bytes("same")]]))
    seen.add(fingerprintOf(store, "a.txt"))
    assert.strictEqual(seen.size, 4)
  })

  it("keeps a file's content and fingerprint when a restore finds it unchanged, and sets its mode", () => {
    const store = new WorkspaceStore.WorkspaceStore()
    store.writeFile("a.txt", bytes("kept"), 0o644)
    const fingerprint = fingerprintOf(store, "a.txt")!
    const plan = store.plan([file("a.txt", 0o600, fingerprint)], () => false)
    assert.deepStrictEqual(plan.toWrite, [])
    store.restore(plan, new Map())
    assert.deepInclude(store.scan(() => false)[0], { path: "a.txt", mode: 0o600, size: 4, fingerprint })
  })

  it("keeps a file's mode when the agent edits it, and gives a new file the default", () => {
    const store = new WorkspaceStore.WorkspaceStore()
    store.writeFile("run.sh", bytes("#!/bin/sh\n"), 0o755)
    store.editFile("run.sh", bytes("#!/bin/sh\necho\n"))
    store.editFile("new.txt", bytes("new"))
    assert.deepStrictEqual(store.scan(() => false).map((entry) => [entry.path, entry.mode]), [["new.txt", 0o644], ["run.sh", 0o755]])
  })

  it("lists folders of their own and implied ones, symlinks without following them, and removes a tree whole", () => {
    const store = new WorkspaceStore.WorkspaceStore()
    store.makeFolder("skills/empty")
    store.writeFile("skills/x/SKILL.md", bytes("x"), 0o644)
    store.restore(store.plan([
      { path: "skills", kind: "directory", mode: 0o700 },
      { path: "skills/empty", kind: "directory", mode: 0o755 },
      { path: "skills/link", kind: "symlink", target: "x" },
      { path: "skills/x/SKILL.md", kind: "file", mode: 0o644, content: Stream.empty }
    ], () => false), new Map([["skills/x/SKILL.md", bytes("x")]]))
    assert.deepStrictEqual(store.scan(() => false).map((entry) => [entry.path, entry.kind, entry.mode]), [
      ["skills", "directory", 0o700],
      ["skills/empty", "directory", 0o755],
      ["skills/link", "symlink", 0o777],
      ["skills/x", "directory", 0o755],
      ["skills/x/SKILL.md", "file", 0o644]
    ])
    assert.strictEqual(store.readEntry("skills/link"), "skills/link is a symlink")
    assert.strictEqual(store.readEntry("skills/link/SKILL.md"), "skills/link is a symlink")
    store.removeTree("skills")
    assert.deepStrictEqual(store.scan(() => false), [])
  })
})
