/**
 * WorkspaceTree on disk, for what the contract cannot set up through the port: symlinks leading out of the workspace
 * (where a restore wants a folder, in place of the workspace's own parent), FIFOs, names that are not UTF-8,
 * fingerprints with the scan's start time moved on (the contract never waits out the racy window), and files whose
 * content a restore must not read.
 */
import type { Excluded, RestoreEntry, WorkspaceEntry } from "@cairn/agent-engine"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { WorkspaceEscape } from "../src/Workspace.ts"
import * as WorkspaceTree from "../src/WorkspaceTree.ts"

const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-workspace-tree-"))
afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))

let counter = 0
/** A home with an empty workspace, and a folder outside it with a file the tests must never touch. */
const fresh = () => {
  const base = Path.join(root, String(counter++))
  const home = Path.join(base, "home")
  const workspace = Path.join(home, ".openclaw", "workspace")
  const outside = Path.join(base, "outside")
  Fs.mkdirSync(workspace, { recursive: true })
  Fs.mkdirSync(outside)
  Fs.writeFileSync(Path.join(outside, "precious.txt"), "precious")
  Fs.chmodSync(Path.join(outside, "precious.txt"), 0o640)
  const inside = (...segments: Array<string>) => Path.join(workspace, ...segments)
  return { location: { home, workspace }, workspace, outside, inside }
}

/** The outside folder as it is: names, contents, modes. */
const snapshotOf = (dir: string) =>
  Fs.readdirSync(dir).sort().map((name) => {
    const stat = Fs.lstatSync(Path.join(dir, name))
    return { name, mode: stat.mode & 0o7777, content: stat.isFile() ? Fs.readFileSync(Path.join(dir, name), "utf8") : undefined }
  })

const nothing: Excluded = () => false
/** A scan start well after every write of the test: each file is old enough to get its fingerprint. */
const later = () => ({ startedAt: (BigInt(Date.now()) + 60_000n) * 1_000_000n })

const encoder = new TextEncoder()
const file = (path: string, mode: number, content: string | Uint8Array, unchangedIf?: string): RestoreEntry => ({
  path,
  kind: "file",
  mode,
  content: Stream.succeed(typeof content === "string" ? encoder.encode(content) : content),
  ...(unchangedIf === undefined ? {} : { unchangedIf })
})
const folder = (path: string, mode = 0o755): RestoreEntry => ({ path, kind: "directory", mode })
const symlink = (path: string, target: string): RestoreEntry => ({ path, kind: "symlink", target })

const read = async (location: WorkspaceTree.Location, path: string) => {
  const fd = WorkspaceTree.openFile(location, path)
  try {
    return await Effect.runPromise(Stream.mkUint8Array(WorkspaceTree.chunksOf(fd)))
  } finally {
    Fs.closeSync(fd)
  }
}
const refusal = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error)
const listed = (entries: ReadonlyArray<WorkspaceEntry>) =>
  entries.map(({ path, kind, mode, size, target }) => ({ path, kind, mode: mode.toString(8), size, ...(target === undefined ? {} : { target }) }))

describe("WorkspaceTree.scan", () => {
  it("lists files, folders and symlinks with modes, sizes and targets, depth first by code point, never following a symlink", async () => {
    const { location, inside, outside } = fresh()
    Fs.mkdirSync(inside("b", "deep"), { recursive: true })
    Fs.writeFileSync(inside("b", "deep", "x.bin"), "xxxxx")
    Fs.writeFileSync(inside("b-c.txt"), "bc")
    Fs.writeFileSync(inside("A.txt"), "")
    Fs.writeFileSync(inside("\u{1F600}.txt"), "smile")
    Fs.writeFileSync(inside("\uFB00.txt"), "ff")
    Fs.chmodSync(inside("b-c.txt"), 0o4750)
    Fs.chmodSync(inside("b"), 0o710)
    Fs.symlinkSync(outside, inside("out"))
    Fs.symlinkSync("nowhere", inside("dangling"))
    execFileSync("mkfifo", [inside("pipe")])
    Fs.writeFileSync(Path.join(Buffer.from(inside()).toString(), "back\\slash"), "not carried")
    Fs.writeFileSync(Buffer.concat([Buffer.from(inside() + "/"), Buffer.from([0x6e, 0xff])]), "not UTF-8")
    const entries = await WorkspaceTree.scan(location, nothing)
    assert.deepStrictEqual(listed(entries), [
      { path: "A.txt", kind: "file", mode: "644", size: 0 },
      { path: "b", kind: "directory", mode: "710", size: 0 },
      { path: "b/deep", kind: "directory", mode: "755", size: 0 },
      { path: "b/deep/x.bin", kind: "file", mode: "644", size: 5 },
      { path: "b-c.txt", kind: "file", mode: "4750", size: 2 },
      { path: "dangling", kind: "symlink", mode: "777", size: 0, target: "nowhere" },
      { path: "out", kind: "symlink", mode: "777", size: 0, target: outside },
      { path: "\uFB00.txt", kind: "file", mode: "644", size: 2 },
      { path: "\u{1F600}.txt", kind: "file", mode: "644", size: 5 }
    ])
  })

  it("gives no fingerprint to a file changed within the racy window, and a stable one to a file older than that", async () => {
    const { location, inside } = fresh()
    Fs.writeFileSync(inside("a.txt"), "aaaa")
    assert.isUndefined((await WorkspaceTree.scan(location, nothing))[0]?.fingerprint, "a file written just now")
    const first = (await WorkspaceTree.scan(location, nothing, later()))[0]?.fingerprint
    const second = (await WorkspaceTree.scan(location, nothing, later()))[0]?.fingerprint
    assert.isString(first)
    assert.strictEqual(second, first)
    // Same size, same times, another inode (a rename over it): another fingerprint.
    const stat = Fs.statSync(inside("a.txt"))
    Fs.writeFileSync(inside("b.txt"), "bbbb")
    Fs.utimesSync(inside("b.txt"), stat.atime, stat.mtime)
    Fs.renameSync(inside("b.txt"), inside("a.txt"))
    const renamed = (await WorkspaceTree.scan(location, nothing, later()))[0]?.fingerprint
    assert.notStrictEqual(renamed, first)
    // An edit in place that keeps the size but moves the modification time back.
    Fs.writeFileSync(inside("a.txt"), "cccc")
    Fs.utimesSync(inside("a.txt"), stat.atime, stat.mtime)
    assert.notStrictEqual((await WorkspaceTree.scan(location, nothing, later()))[0]?.fingerprint, renamed)
    // Folders and symlinks have none.
    Fs.mkdirSync(inside("dir"))
    Fs.symlinkSync("a.txt", inside("link"))
    for (const entry of await WorkspaceTree.scan(location, nothing, later())) {
      if (entry.kind !== "file") assert.isUndefined(entry.fingerprint, entry.path)
    }
  })

  it("does not ask about, or look into, what is under an excluded folder", async () => {
    const { location, inside } = fresh()
    Fs.mkdirSync(inside("node_modules", "pkg"), { recursive: true })
    Fs.writeFileSync(inside("node_modules", "pkg", "index.js"), "x")
    Fs.writeFileSync(inside("kept.txt"), "x")
    const asked: Array<string> = []
    const entries = await WorkspaceTree.scan(location, (path) => {
      asked.push(path)
      return path === "node_modules"
    })
    assert.deepStrictEqual(entries.map((entry) => entry.path), ["kept.txt"])
    assert.deepStrictEqual(asked, ["kept.txt", "node_modules"])
  })

  it("lists nothing where there is no workspace yet, and refuses a workspace (or its parent) replaced by a symlink", async () => {
    const { location, workspace, outside } = fresh()
    Fs.rmSync(workspace, { recursive: true })
    assert.deepStrictEqual(await WorkspaceTree.scan(location, nothing), [])
    Fs.symlinkSync(outside, workspace)
    assert.instanceOf(await refusal(WorkspaceTree.scan(location, nothing)), WorkspaceEscape)
    Fs.rmSync(workspace)
    const state = Path.dirname(workspace)
    Fs.renameSync(state, `${state}-moved`)
    Fs.mkdirSync(Path.join(outside, "workspace"))
    Fs.symlinkSync(outside, state)
    assert.instanceOf(await refusal(WorkspaceTree.scan(location, nothing)), WorkspaceEscape)
  })
})

describe("WorkspaceTree.openFile", () => {
  it("streams a file's bytes, in chunks, whole", async () => {
    const { location, inside } = fresh()
    const big = new Uint8Array(2_500_000).map((_, index) => index % 253)
    Fs.mkdirSync(inside("dir"))
    Fs.writeFileSync(inside("dir", "big.bin"), big)
    Fs.writeFileSync(inside("empty"), "")
    const fd = WorkspaceTree.openFile(location, "dir/big.bin")
    try {
      const chunks = await Effect.runPromise(Stream.runCollect(WorkspaceTree.chunksOf(fd)))
      assert.isAbove(chunks.length, 2)
      assert.isTrue(Buffer.concat(chunks).equals(Buffer.from(big)))
    } finally {
      Fs.closeSync(fd)
    }
    assert.strictEqual((await read(location, "empty")).length, 0)
  })

  it("refuses a missing file, a folder, a FIFO (without blocking) and any path through a symlink, inside the workspace or out", async () => {
    const { location, inside, outside } = fresh()
    Fs.mkdirSync(inside("dir"))
    Fs.writeFileSync(inside("dir", "a.txt"), "a")
    Fs.symlinkSync("dir", inside("alias"))
    Fs.symlinkSync("dir/a.txt", inside("a-link"))
    Fs.symlinkSync(outside, inside("out"))
    Fs.symlinkSync(Path.join(outside, "precious.txt"), inside("precious-link"))
    execFileSync("mkfifo", [inside("pipe")])
    for (const path of ["missing", "dir", "alias/a.txt", "a-link", "out/precious.txt", "precious-link", "pipe", "dir/a.txt/x"]) {
      assert.instanceOf(await refusal(read(location, path)), Error, path)
    }
    assert.strictEqual(new TextDecoder().decode(await read(location, "dir/a.txt")), "a")
  })
})

describe("WorkspaceTree.restore", () => {
  it("never writes through a symlink to an outside folder where the tree wants a folder: the symlink is replaced", async () => {
    const { location, inside, outside } = fresh()
    Fs.symlinkSync(outside, inside("escape"))
    Fs.mkdirSync(inside("nested"))
    Fs.symlinkSync(outside, inside("nested", "deeper"))
    const before = snapshotOf(outside)
    await WorkspaceTree.restore(location, [
      file("escape/precious.txt", 0o644, "overwritten?"),
      file("escape/new.txt", 0o644, "new"),
      folder("nested/deeper/sub"),
      file("nested/deeper/sub/x.txt", 0o600, "x")
    ], nothing)
    assert.deepStrictEqual(snapshotOf(outside), before, "the outside folder changed")
    assert.isTrue(Fs.lstatSync(inside("escape")).isDirectory())
    assert.isTrue(Fs.lstatSync(inside("nested", "deeper")).isDirectory())
    assert.deepStrictEqual(listed(await WorkspaceTree.scan(location, nothing)), [
      { path: "escape", kind: "directory", mode: "755", size: 0 },
      { path: "escape/new.txt", kind: "file", mode: "644", size: 3 },
      { path: "escape/precious.txt", kind: "file", mode: "644", size: 12 },
      { path: "nested", kind: "directory", mode: "755", size: 0 },
      { path: "nested/deeper", kind: "directory", mode: "755", size: 0 },
      { path: "nested/deeper/sub", kind: "directory", mode: "755", size: 0 },
      { path: "nested/deeper/sub/x.txt", kind: "file", mode: "600", size: 1 }
    ])
  })

  it("restores symlinks leading out as symlinks, and replaces them without touching what they point to", async () => {
    const { location, inside, outside } = fresh()
    const precious = Path.join(outside, "precious.txt")
    Fs.symlinkSync(precious, inside("was-link.txt"))
    Fs.symlinkSync(precious, inside("kept-link"))
    const before = snapshotOf(outside)
    await WorkspaceTree.restore(location, [
      file("was-link.txt", 0o600, "a file now"),
      symlink("kept-link", precious),
      symlink("to-outside", outside),
      symlink("to-file", precious)
    ], nothing)
    assert.deepStrictEqual(snapshotOf(outside), before, "a symlink's target changed")
    assert.isTrue(Fs.lstatSync(inside("was-link.txt")).isFile())
    assert.strictEqual(Fs.readFileSync(inside("was-link.txt"), "utf8"), "a file now")
    assert.strictEqual(Fs.readlinkSync(inside("to-outside")), outside)
    assert.strictEqual(Fs.readlinkSync(inside("to-file")), precious)
    assert.strictEqual(Fs.readlinkSync(inside("kept-link")), precious)
  })

  it("writes nothing outside when the agent swaps a folder for a symlink leading out while the restore runs", async () => {
    const { location, inside, outside } = fresh()
    const before = snapshotOf(outside)
    // The first file's content swaps its folder (open by then) and `c`; the other files of the folder wait for it, so
    // that those placed after the first ones are written into a folder that is a symlink by path.
    let swapped: () => void = () => undefined
    const swap = new Promise<void>((resolve) => swapped = resolve)
    const swapper = Stream.fromEffect(Effect.sync(() => {
      for (const name of ["b", "c"]) {
        Fs.renameSync(inside(name), inside(`${name}-moved`))
        Fs.symlinkSync(outside, inside(name))
      }
      swapped()
      return encoder.encode("swapped")
    }))
    const afterSwap = Stream.fromEffect(Effect.promise(() => swap.then(() => encoder.encode("b"))))
    const tree: Array<RestoreEntry> = [
      { path: "b/0.txt", kind: "file", mode: 0o644, content: swapper },
      ...Array.from({ length: 40 }, (_, index): RestoreEntry => ({ path: `b/${index + 1}.txt`, kind: "file", mode: 0o644, content: afterSwap })),
      folder("c", 0o555),
      file("c/precious.txt", 0o644, "overwritten?")
    ]
    await refusal(WorkspaceTree.restore(location, tree, nothing))
    assert.deepStrictEqual(snapshotOf(outside), before, "the outside folder changed")
    assert.strictEqual(Fs.statSync(outside).mode & 0o7777, 0o755, "the outside folder's mode changed")
    assert.strictEqual(Fs.readdirSync(inside("b-moved")).filter((name) => name.endsWith(".txt")).length, 41, "the files went to the folder opened")
  })

  it("refuses to restore when the workspace's parent is a symlink, and writes nothing outside", async () => {
    const { location, workspace, outside } = fresh()
    const state = Path.dirname(workspace)
    Fs.rmSync(state, { recursive: true })
    Fs.symlinkSync(outside, state)
    const before = snapshotOf(outside)
    assert.instanceOf(await refusal(WorkspaceTree.restore(location, [file("a.txt", 0o644, "a")], nothing)), WorkspaceEscape)
    assert.deepStrictEqual(snapshotOf(outside), before)
  })

  it("keeps a file whose fingerprint is its unchangedIf without reading the content, and rewrites one that differs", async () => {
    const { location, inside } = fresh()
    Fs.writeFileSync(inside("kept.txt"), "kept")
    Fs.writeFileSync(inside("stale.txt"), "stale")
    const scanned = await WorkspaceTree.scan(location, nothing, later())
    const fingerprint = scanned.find((entry) => entry.path === "kept.txt")!.fingerprint!
    const keptInode = Fs.statSync(inside("kept.txt")).ino
    const staleInode = Fs.statSync(inside("stale.txt")).ino
    await WorkspaceTree.restore(location, [
      { path: "kept.txt", kind: "file", mode: 0o600, content: Stream.die(new Error("read a kept file")), unchangedIf: fingerprint },
      file("stale.txt", 0o644, "fresh", scanned.find((entry) => entry.path === "kept.txt")!.fingerprint)
    ], nothing)
    assert.strictEqual(Fs.statSync(inside("kept.txt")).ino, keptInode)
    assert.strictEqual(Fs.statSync(inside("kept.txt")).mode & 0o7777, 0o600)
    assert.strictEqual(Fs.readFileSync(inside("kept.txt"), "utf8"), "kept")
    assert.notStrictEqual(Fs.statSync(inside("stale.txt")).ino, staleInode)
    assert.strictEqual(Fs.readFileSync(inside("stale.txt"), "utf8"), "fresh")
  })

  it("sets modes exactly, read-only folders once their content is in, and can restore over them and empty them again", async () => {
    const { location, inside } = fresh()
    const tree = [
      folder("locked", 0o555),
      file("locked/fixed.txt", 0o444, "fixed"),
      folder("locked/inner", 0o500),
      file("locked/inner/deep.txt", 0o400, "deep"),
      folder("private", 0o700),
      file("tool", 0o4755, "#!/bin/sh\n")
    ]
    await WorkspaceTree.restore(location, tree, nothing)
    await WorkspaceTree.restore(location, [...tree.slice(0, 3), file("locked/inner/deep.txt", 0o400, "changed"), ...tree.slice(4)], nothing)
    assert.deepStrictEqual(listed(await WorkspaceTree.scan(location, nothing)), [
      { path: "locked", kind: "directory", mode: "555", size: 0 },
      { path: "locked/fixed.txt", kind: "file", mode: "444", size: 5 },
      { path: "locked/inner", kind: "directory", mode: "500", size: 0 },
      { path: "locked/inner/deep.txt", kind: "file", mode: "400", size: 7 },
      { path: "private", kind: "directory", mode: "700", size: 0 },
      { path: "tool", kind: "file", mode: "4755", size: 10 }
    ])
    await WorkspaceTree.restore(location, [], nothing)
    assert.deepStrictEqual(Fs.readdirSync(inside()), [])
  })

  it("removes what the tree does not hold, FIFOs included; keeps excluded paths, their folders and names it cannot carry", async () => {
    const { location, inside } = fresh()
    Fs.mkdirSync(inside("holder", "node_modules", "pkg"), { recursive: true })
    Fs.writeFileSync(inside("holder", "node_modules", "pkg", "index.js"), "kept")
    Fs.writeFileSync(inside("holder", "other.txt"), "removed")
    Fs.chmodSync(inside("holder"), 0o750)
    Fs.mkdirSync(inside("gone", "deep"), { recursive: true })
    Fs.writeFileSync(inside("gone", "deep", "file.txt"), "removed")
    Fs.mkdirSync(inside("was-folder", "node_modules"), { recursive: true })
    Fs.writeFileSync(inside("was-file"), "removed")
    execFileSync("mkfifo", [inside("pipe")])
    const foreign = Buffer.concat([Buffer.from(inside() + "/"), Buffer.from([0x6e, 0xff])])
    Fs.writeFileSync(foreign, "not UTF-8")
    const excluded: Excluded = (path) => path.split("/").includes("node_modules")
    await WorkspaceTree.restore(location, [
      file("was-folder", 0o644, "a file now"),
      file("was-file/inside.txt", 0o644, "in a folder now"),
      file("node_modules/ignored.js", 0o644, "excluded entries of the tree are not written")
    ], excluded)
    assert.deepStrictEqual(listed(await WorkspaceTree.scan(location, nothing)), [
      { path: "holder", kind: "directory", mode: "750", size: 0 },
      { path: "holder/node_modules", kind: "directory", mode: "755", size: 0 },
      { path: "holder/node_modules/pkg", kind: "directory", mode: "755", size: 0 },
      { path: "holder/node_modules/pkg/index.js", kind: "file", mode: "644", size: 4 },
      { path: "was-file", kind: "directory", mode: "755", size: 0 },
      { path: "was-file/inside.txt", kind: "file", mode: "644", size: 15 },
      { path: "was-folder", kind: "file", mode: "644", size: 10 }
    ])
    assert.isTrue(Fs.existsSync(foreign), "a name the port cannot carry was removed")
    assert.isFalse(Fs.readdirSync(inside()).some((name) => name.startsWith(".cairn-")), "a temporary file was left")
  })

  it("fails when a file's content fails, leaving no temporary file behind", async () => {
    const { location, inside } = fresh()
    const error = await refusal(WorkspaceTree.restore(location, [
      file("good.txt", 0o644, "good"),
      { path: "bad.txt", kind: "file", mode: 0o644, content: Stream.concat(Stream.succeed(encoder.encode("half")), Stream.fail(new Error("source gone"))) }
    ], nothing))
    assert.isDefined(error)
    assert.isFalse(Fs.existsSync(inside("bad.txt")))
    assert.isFalse(Fs.readdirSync(inside()).some((name) => name.startsWith(".cairn-")), "a temporary file was left")
  })
})
