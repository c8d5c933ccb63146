/**
 * The AgentEngine contract for the workspace-tree operations snapshots are made of (see ContractSection.ts): a scan
 * lists the workspace (files, folders, symlinks, modes, fingerprints) in depth-first name order without descending
 * into excluded folders; a restore makes the workspace exactly a tree, keeping excluded paths and never writing through
 * a symlink; a read streams one file's bytes and never goes through a symlink. Cases on the shared agent keep to a
 * folder of their own by excluding everything else; cases that restore a whole workspace take a fresh agent.
 *
 * A fingerprint may be absent (on disk, for a file changed in the last seconds), so the cases compare fingerprints
 * only where a scan gives them: an engine that always gives them (the simulation) is held to every comparison.
 */
import { assert } from "@effect/vitest"
import { Effect, Exit, Stream } from "effect"
import { AgentEngine, type WorkspaceFile } from "../AgentEngine.ts"
import type { Excluded, RestoreEntry, WorkspaceEntry } from "../WorkspaceTree.ts"
import type { SectionContext } from "./ContractSection.ts"

const encoder = new TextEncoder()
const decoder = new TextDecoder()
let counter = 0
/** A folder name no other case uses in the shared agent. */
const uniqueFolder = () => `snapshots-contract-${Date.now().toString(36)}-${(counter++).toString(36)}`

const textFile = (path: string, content: string): WorkspaceFile => ({ path, content: encoder.encode(content) })
/** The bytes of the files the cases restore, by entry. */
const contents = new WeakMap<RestoreEntry, Uint8Array>()
const file = (path: string, mode: number, content: string | Uint8Array, unchangedIf?: string): RestoreEntry => {
  const bytes = typeof content === "string" ? encoder.encode(content) : content
  const entry: RestoreEntry = {
    path,
    kind: "file",
    mode,
    content: Stream.succeed(bytes),
    ...(unchangedIf === undefined ? {} : { unchangedIf })
  }
  contents.set(entry, bytes)
  return entry
}
const folder = (path: string, mode = 0o755): RestoreEntry => ({ path, kind: "directory", mode })
const symlink = (path: string, target: string): RestoreEntry => ({ path, kind: "symlink", target })
/** Content that fails the restore if it is read at all. */
const neverRead = (path: string, mode: number, unchangedIf: string): RestoreEntry => ({
  path,
  kind: "file",
  mode,
  content: Stream.fail(new Error(`the content of ${path} was read`)),
  unchangedIf
})

/** Everything outside `root`, so that a scan or restore sees only the case's own folder. */
const onlyUnder = (root: string): Excluded => (path) => path !== root && !path.startsWith(`${root}/`)
const nothing: Excluded = () => false

/** An entry as assertions compare it: no fingerprint, the mode in octal, a symlink's left out (the system's choice). */
interface Compared {
  readonly path: string
  readonly kind: WorkspaceEntry["kind"]
  readonly mode?: string
  readonly size: number
  readonly target?: string
}
const shape = (entries: ReadonlyArray<WorkspaceEntry>) =>
  entries.map(({ path, kind, mode, size, target }): Compared =>
    kind === "symlink" ? { path, kind, size, target: target! } : { path, kind, mode: mode.toString(8), size })

/** What a restore to `entries` gives a scan: the tree with its implied folders (0o755), depth first in name order. */
const scanOf = (entries: ReadonlyArray<RestoreEntry>) => {
  const byPath = new Map<string, WorkspaceEntry>()
  for (const entry of entries) {
    const segments = entry.path.split("/")
    for (let i = 1; i < segments.length; i++) {
      const path = segments.slice(0, i).join("/")
      if (!byPath.has(path)) byPath.set(path, { path, kind: "directory", mode: 0o755, size: 0 })
    }
  }
  for (const entry of entries) {
    byPath.set(entry.path, entry.kind === "symlink"
      ? { path: entry.path, kind: "symlink", mode: 0o777, size: 0, target: entry.target }
      : { path: entry.path, kind: entry.kind, mode: entry.mode, size: contents.get(entry)?.length ?? 0 })
  }
  return [...byPath.values()].sort((a, b) => depthFirst(a.path, b.path))
}

/** Depth-first order of paths: segment by segment, each by code point. */
const depthFirst = (a: string, b: string): number => {
  const [x, y] = [a.split("/"), b.split("/")]
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return codePoints(x[i]!) < codePoints(y[i]!) ? -1 : 1
  }
  return x.length - y.length
}
const codePoints = (name: string) => Array.from(name, (char) => char.codePointAt(0)!.toString(16).padStart(6, "0")).join("")

export const snapshotsContract = <R>({ it, sharedAgent, freshAgent, timeout }: SectionContext<R>): void => {
  it.effect("scans what was written: files with sizes and modes, folders, parents first, siblings by code point", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* sharedAgent
      const root = uniqueFolder()
      yield* engine.writeWorkspaceFiles(agentId, [
        textFile(`${root}/b/c.md`, "cc"),
        textFile(`${root}/b-c.txt`, "b-c"),
        textFile(`${root}/a.txt`, "aaaa"),
        textFile(`${root}/A.txt`, ""),
        textFile(`${root}/b/deep/x.bin`, "xxxxx"),
        textFile(`${root}/scripts/run.sh`, "echo run\n"),
        textFile(`${root}/tool`, "#!/bin/sh\n"),
        // U+FB00 sorts before U+1F600 by code point, after it by UTF-16 code unit.
        textFile(`${root}/\u{1F600}.txt`, "smile"),
        textFile(`${root}/\uFB00.txt`, "ff")
      ])
      const entries = yield* engine.scanWorkspace(agentId, { exclude: onlyUnder(root) })
      // Folders are made with the process's umask, so only their kind is compared.
      assert.deepStrictEqual(
        entries.map((entry) => entry.kind === "directory" ? { path: entry.path, kind: entry.kind } : shape([entry])[0]),
        [
          { path: root, kind: "directory" },
          { path: `${root}/A.txt`, kind: "file", mode: "644", size: 0 },
          { path: `${root}/a.txt`, kind: "file", mode: "644", size: 4 },
          { path: `${root}/b`, kind: "directory" },
          { path: `${root}/b/c.md`, kind: "file", mode: "644", size: 2 },
          { path: `${root}/b/deep`, kind: "directory" },
          { path: `${root}/b/deep/x.bin`, kind: "file", mode: "644", size: 5 },
          { path: `${root}/b-c.txt`, kind: "file", mode: "644", size: 3 },
          { path: `${root}/scripts`, kind: "directory" },
          { path: `${root}/scripts/run.sh`, kind: "file", mode: "755", size: 9 },
          { path: `${root}/tool`, kind: "file", mode: "755", size: 10 },
          { path: `${root}/\uFB00.txt`, kind: "file", mode: "644", size: 2 },
          { path: `${root}/\u{1F600}.txt`, kind: "file", mode: "644", size: 5 }
        ]
      )
      for (const entry of entries) {
        if (entry.kind !== "file") assert.isUndefined(entry.fingerprint, `${entry.path} has a fingerprint`)
      }
    }), timeout)

  it.effect("leaves excluded paths out of a scan, and does not look inside an excluded folder", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* sharedAgent
      const root = uniqueFolder()
      yield* engine.writeWorkspaceFiles(agentId, [
        textFile(`${root}/node_modules/pkg/index.js`, "module"),
        textFile(`${root}/src/node_modules/x.js`, "x"),
        textFile(`${root}/src/main.ts`, "main"),
        textFile(`${root}/keep.txt`, "keep")
      ])
      const asked: Array<string> = []
      const outside = onlyUnder(root)
      const exclude: Excluded = (path) => {
        asked.push(path)
        return outside(path) || path.split("/").includes("node_modules")
      }
      const entries = yield* engine.scanWorkspace(agentId, { exclude })
      assert.deepStrictEqual(entries.map((entry) => entry.path), [root, `${root}/keep.txt`, `${root}/src`, `${root}/src/main.ts`])
      assert.deepStrictEqual(
        asked.filter((path) => path.startsWith(`${root}/node_modules/`) || path.startsWith(`${root}/src/node_modules/`)),
        [],
        "the scan asked about paths inside an excluded folder"
      )
    }), timeout)

  it.effect("restores a tree exactly: nested and empty folders, modes, symlinks (relative, absolute, dangling)", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* freshAgent
      const tree = [
        folder("bin", 0o750),
        file("bin/tool.sh", 0o755, "#!/bin/sh\necho tool\n"),
        folder("empty", 0o700),
        file("notes/deep/secret.txt", 0o600, "secret"),
        file("notes/plain.md", 0o644, ""),
        folder("readonly", 0o555),
        file("readonly/fixed.txt", 0o444, "fixed"),
        symlink("link", "notes/deep/secret.txt"),
        symlink("absolute", "/etc/hostname"),
        symlink("dangling", "nowhere/at/all"),
        file("binary.bin", 0o640, new Uint8Array([0, 255, 128, 10, 13, 0xfe]))
      ]
      yield* engine.restoreWorkspace(agentId, tree, { exclude: nothing })
      const scanned = yield* engine.scanWorkspace(agentId, { exclude: nothing })
      assert.deepStrictEqual(shape(scanned), shape(scanOf(tree)))
      for (const entry of tree) {
        if (entry.kind !== "file") continue
        assert.deepStrictEqual([...(yield* engine.readWorkspaceFile(agentId, entry.path))!], [...contents.get(entry)!], entry.path)
      }
      // Restoring the same tree again changes nothing; restoring an empty one empties the workspace, read-only folders too.
      yield* engine.restoreWorkspace(agentId, tree, { exclude: nothing })
      assert.deepStrictEqual(shape(yield* engine.scanWorkspace(agentId, { exclude: nothing })), shape(scanned))
      yield* engine.restoreWorkspace(agentId, [], { exclude: nothing })
      assert.deepStrictEqual(yield* engine.scanWorkspace(agentId, { exclude: nothing }), [])
    }), timeout)

  it.effect("removes what the tree does not hold, replaces entries of the wrong kind, and keeps excluded paths", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* freshAgent
      yield* engine.writeWorkspaceFiles(agentId, [
        textFile("old.txt", "old"),
        textFile("gone/deep/file.txt", "gone"),
        textFile("holder/node_modules/pkg/index.js", "kept module"),
        textFile("holder/other.txt", "removed"),
        textFile("node_modules/top.js", "kept too"),
        textFile("stays.txt", "before"),
        textFile("was-folder/inside.txt", "replaced by a file"),
        textFile("was-file", "replaced by a folder")
      ])
      const excluded: Excluded = (path) => path.split("/").includes("node_modules")
      yield* engine.restoreWorkspace(agentId, [
        file("stays.txt", 0o644, "after"),
        file("was-folder", 0o644, "a file now"),
        file("was-file/inside.txt", 0o644, "in a folder now"),
        file("new/dir/file.txt", 0o644, "new"),
        // Excluded entries of the tree are left alone too.
        file("node_modules/top.js", 0o644, "not written")
      ], { exclude: excluded })
      const scanned = yield* engine.scanWorkspace(agentId, { exclude: nothing })
      assert.deepStrictEqual(scanned.map((entry) => [entry.path, entry.kind]), [
        ["holder", "directory"],
        ["holder/node_modules", "directory"],
        ["holder/node_modules/pkg", "directory"],
        ["holder/node_modules/pkg/index.js", "file"],
        ["new", "directory"],
        ["new/dir", "directory"],
        ["new/dir/file.txt", "file"],
        ["node_modules", "directory"],
        ["node_modules/top.js", "file"],
        ["stays.txt", "file"],
        ["was-file", "directory"],
        ["was-file/inside.txt", "file"],
        ["was-folder", "file"]
      ])
      const read = (path: string) => Effect.map(engine.readWorkspaceFile(agentId, path), (bytes) => decoder.decode(bytes))
      assert.strictEqual(yield* read("holder/node_modules/pkg/index.js"), "kept module")
      assert.strictEqual(yield* read("node_modules/top.js"), "kept too")
      assert.strictEqual(yield* read("stays.txt"), "after")
      assert.strictEqual(yield* read("was-folder"), "a file now")
      assert.strictEqual(yield* read("was-file/inside.txt"), "in a folder now")
    }), timeout)

  it.effect("keeps a file whose fingerprint is its unchangedIf without reading the content, and rewrites one that differs", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* sharedAgent
      const root = uniqueFolder()
      const exclude = onlyUnder(root)
      yield* engine.writeWorkspaceFiles(agentId, [textFile(`${root}/kept.txt`, "kept"), textFile(`${root}/stale.txt`, "stale")])
      const before = yield* engine.scanWorkspace(agentId, { exclude })
      const fingerprint = before.find((entry) => entry.path === `${root}/kept.txt`)?.fingerprint
      yield* engine.restoreWorkspace(agentId, [
        folder(root),
        fingerprint === undefined ? file(`${root}/kept.txt`, 0o600, "kept") : neverRead(`${root}/kept.txt`, 0o600, fingerprint),
        file(`${root}/stale.txt`, 0o644, "fresh", "not-the-fingerprint"),
        file(`${root}/absent.txt`, 0o644, "written", "not-the-fingerprint")
      ], { exclude })
      const after = yield* engine.scanWorkspace(agentId, { exclude })
      assert.deepStrictEqual(shape(after).map((entry) => [entry.path, entry.mode]), [
        [root, "755"],
        [`${root}/absent.txt`, "644"],
        [`${root}/kept.txt`, "600"],
        [`${root}/stale.txt`, "644"]
      ])
      const read = (path: string) => Effect.map(engine.readWorkspaceFile(agentId, path), (bytes) => decoder.decode(bytes))
      assert.strictEqual(yield* read(`${root}/kept.txt`), "kept")
      assert.strictEqual(yield* read(`${root}/stale.txt`), "fresh")
      assert.strictEqual(yield* read(`${root}/absent.txt`), "written")
    }), timeout)

  it.effect("gives an untouched file the same fingerprint in every scan, and a replaced one another", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* sharedAgent
      const root = uniqueFolder()
      const exclude = onlyUnder(root)
      yield* engine.writeWorkspaceFiles(agentId, [textFile(`${root}/same.txt`, "same"), textFile(`${root}/edited.txt`, "v1")])
      const fingerprints = (entries: ReadonlyArray<WorkspaceEntry>) =>
        new Map(entries.filter((entry) => entry.kind === "file").map((entry) => [entry.path, entry.fingerprint]))
      const first = fingerprints(yield* engine.scanWorkspace(agentId, { exclude }))
      const second = fingerprints(yield* engine.scanWorkspace(agentId, { exclude }))
      yield* engine.writeWorkspaceFiles(agentId, [textFile(`${root}/edited.txt`, "v2")])
      yield* engine.restoreWorkspace(agentId, [
        folder(root),
        file(`${root}/same.txt`, 0o644, "same", first.get(`${root}/same.txt`) ?? "absent"),
        file(`${root}/edited.txt`, 0o644, "v2"),
        file(`${root}/restored.txt`, 0o644, "new")
      ], { exclude })
      const third = fingerprints(yield* engine.scanWorkspace(agentId, { exclude }))
      const same = [first, second, third].map((scan) => scan.get(`${root}/same.txt`)).filter((fp) => fp !== undefined)
      assert.strictEqual(new Set(same).size, Math.min(same.length, 1), "an untouched file's fingerprint changed")
      const edited = [first, third].map((scan) => scan.get(`${root}/edited.txt`))
      if (edited[0] !== undefined && edited[1] !== undefined) assert.notStrictEqual(edited[0], edited[1], "a rewritten file kept its fingerprint")
    }), timeout)

  it.effect("streams a file's bytes; refuses a missing file, a folder, and any path through a symlink", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* sharedAgent
      const root = uniqueFolder()
      const big = new Uint8Array(3 * 1024 * 1024 + 17).map((_, index) => (index * 7) % 251)
      yield* engine.restoreWorkspace(agentId, [
        folder(root),
        file(`${root}/dir/big.bin`, 0o644, big),
        file(`${root}/dir/small.txt`, 0o644, "small"),
        file(`${root}/dir/empty`, 0o644, ""),
        symlink(`${root}/alias`, "dir"),
        symlink(`${root}/shortcut.txt`, "dir/small.txt")
      ], { exclude: onlyUnder(root) })
      const read = (path: string) => Stream.mkUint8Array(engine.readWorkspaceEntry(agentId, path))
      assert.isTrue(Buffer.from(yield* read(`${root}/dir/big.bin`)).equals(Buffer.from(big)), "the big file's bytes differ")
      assert.strictEqual(decoder.decode(yield* read(`${root}/dir/small.txt`)), "small")
      assert.strictEqual((yield* read(`${root}/dir/empty`)).length, 0)
      for (const path of [`${root}/missing.txt`, `${root}/dir`, `${root}/alias/small.txt`, `${root}/shortcut.txt`, `${root}/alias`]) {
        const exit = yield* Effect.exit(read(path))
        assert.isTrue(Exit.isFailure(exit), `reading ${path} was not refused`)
        assert.strictEqual((yield* Effect.flip(read(path)))._tag, "EngineUnavailable", path)
      }
    }), timeout)

  it.effect("writes nothing through a symlink where the tree wants a folder: the symlink is replaced", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* freshAgent
      // On OpenClaw the workspace's parent holds the agent's config: a write through `escape` would replace it.
      yield* engine.restoreWorkspace(agentId, [symlink("escape", "..")], { exclude: nothing })
      const config = yield* engine.readConfig(agentId)
      yield* engine.restoreWorkspace(agentId, [folder("escape", 0o755), file("escape/openclaw.json", 0o644, "not a config")], { exclude: nothing })
      assert.deepStrictEqual(shape(yield* engine.scanWorkspace(agentId, { exclude: nothing })), [
        { path: "escape", kind: "directory", mode: "755", size: 0 },
        { path: "escape/openclaw.json", kind: "file", mode: "644", size: 12 }
      ])
      assert.deepStrictEqual(yield* engine.readConfig(agentId), config, "the config outside the workspace changed")
    }), timeout)

  it.effect("knows no agent that was never provisioned", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = uniqueFolder()
      const errors = yield* Effect.all([
        Effect.flip(engine.scanWorkspace(agentId, { exclude: nothing })),
        Effect.flip(Stream.runDrain(engine.readWorkspaceEntry(agentId, "a.txt"))),
        Effect.flip(engine.restoreWorkspace(agentId, [file("a.txt", 0o644, "a")], { exclude: nothing }))
      ])
      for (const error of errors) assert.deepInclude(error, { _tag: "AgentNotProvisioned", agentId })
    }), timeout)
}
