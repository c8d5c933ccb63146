/**
 * Snapshot diff and export through the real routes on the simulated engine and the in-memory snapshot store, for
 * what the server test cannot lay down through the API: modes, empty folders, symlinks and long names. The tar is
 * extracted by the system `tar` and compared with the workspace as it was written; the diff names mode and symlink
 * changes. (apps/server-node/test/SnapshotDiffExport.test.ts checks CAR and tar against @helia/unixfs.)
 */
import { AgentEngine, type RestoreEntry } from "@cairn/agent-engine"
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { execFileSync } from "node:child_process"
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"

const { runtime, web, request, workspace, key, dispose } = TestRuntime.makeTestApi()
const { newAgent } = ApiKit.make(request)
const scratch = mkdtempSync(join(tmpdir(), "cairn-snapshot-tar-"))

let owner: string
let agentId: string

beforeAll(async () => {
  owner = (await key(await workspace(10))).token
  agentId = await newAgent(owner, "tarball")
}, 120_000)

afterAll(async () => {
  await dispose()
  rmSync(scratch, { recursive: true, force: true })
})

const text = (value: string) => new TextEncoder().encode(value)
const longName = `${"a-long-folder-name/".repeat(6)}and a file name past the hundred bytes of a plain tar header.txt`

/** A workspace with every kind of entry a snapshot keeps. */
const files: ReadonlyArray<{ path: string; mode: number; content: string }> = [
  { path: "run.sh", mode: 0o755, content: "#!/bin/sh\necho hi\n" },
  { path: "secrets/key.pem", mode: 0o600, content: "-----BEGIN KEY-----\n" },
  { path: "private/notes.txt", mode: 0o640, content: "private notes\n" },
  { path: "ünïcödé/日本語.txt", mode: 0o644, content: "こんにちは\n" },
  { path: longName, mode: 0o644, content: "deep\n" }
]
const folders = [{ path: "private", mode: 0o700 }, { path: "empty", mode: 0o750 }]
const symlinks = [{ path: "links/run", target: "../run.sh" }, { path: "links/hostname", target: "/etc/hostname" }]

const lay = (entries: ReadonlyArray<RestoreEntry>) =>
  runtime.runPromise(AgentEngine.use((engine) => engine.restoreWorkspace(agentId, entries, { exclude: () => false })) as Effect.Effect<void>)

const entriesOf = (modes: Record<string, number> = {}, targets: Record<string, string> = {}): ReadonlyArray<RestoreEntry> => [
  ...folders.map(({ path, mode }): RestoreEntry => ({ path, kind: "directory", mode })),
  ...files.map(({ path, mode, content }): RestoreEntry => ({ path, kind: "file", mode: modes[path] ?? mode, content: Stream.make(text(content)) })),
  ...symlinks.map(({ path, target }): RestoreEntry => ({ path, kind: "symlink", target: targets[path] ?? target }))
]

const sync = async () => {
  const synced = await request("POST", `/v0/agents/${agentId}/snapshots/sync`, owner)
  assert.strictEqual(synced.status, 200, JSON.stringify(synced.body))
  return synced.body!["snapshotCid"] as string
}

/** Every entry under `directory` as `tar` left it: kind, mode, content or target. */
const onDisk = (directory: string) =>
  new Map(readdirSync(directory, { recursive: true, withFileTypes: true }).map((entry) => {
    const full = join(entry.parentPath, entry.name)
    const stat = lstatSync(full)
    const seen = entry.isSymbolicLink()
      ? { kind: "symlink", target: readlinkSync(full) }
      : entry.isDirectory()
      ? { kind: "directory", mode: stat.mode & 0o7777 }
      : { kind: "file", mode: stat.mode & 0o7777, content: readFileSync(full, "utf8") }
    return [relative(directory, full), seen] as const
  }))

describe("snapshot export as tar.gz", () => {
  it("keeps modes, empty folders, symlinks and long names, as the system tar extracts them", async () => {
    await lay(entriesOf())
    const cid = await sync()
    const response = await web.handler(new Request(`http://cairn/v0/agents/${agentId}/snapshots/${cid}/export?format=tar.gz`, { headers: { authorization: `Bearer ${owner}` } }))
    assert.strictEqual(response.status, 200, await response.clone().text())
    const archive = join(scratch, "snapshot.tar.gz")
    writeFileSync(archive, new Uint8Array(await response.arrayBuffer()))
    const out = join(scratch, "out")
    mkdirSync(out)
    execFileSync("tar", ["-xzf", archive, "-C", out, "--no-same-owner", "--same-permissions"])
    const seen = onDisk(join(out, cid))
    for (const { path, mode, content } of files) assert.deepStrictEqual(seen.get(path), { kind: "file", mode, content }, path)
    for (const { path, mode } of folders) assert.deepStrictEqual(seen.get(path), { kind: "directory", mode }, path)
    for (const { path, target } of symlinks) assert.deepStrictEqual(seen.get(path), { kind: "symlink", target }, path)
    // Implied folders have UnixFS's default mode; nothing else is in the archive.
    assert.deepStrictEqual(seen.get("links"), { kind: "directory", mode: 0o755 })
    const expected = new Set([...files, ...folders, ...symlinks].flatMap(({ path }) => path.split("/").map((_, i, parts) => parts.slice(0, i + 1).join("/"))))
    assert.deepStrictEqual(new Set(seen.keys()), expected)
  })

  it("diffs name a mode change and a symlink's new target", async () => {
    await lay(entriesOf())
    const before = await sync()
    await lay(entriesOf({ "run.sh": 0o700 }, { "links/run": "../secrets/key.pem" }))
    const after = await sync()
    const diff = await request("GET", `/v0/agents/${agentId}/snapshots/${after}/diff?against=${before}`, owner)
    assert.strictEqual(diff.status, 200, JSON.stringify(diff.body))
    assert.deepStrictEqual(diff.body!["added"], [])
    assert.deepStrictEqual(diff.body!["removed"], [])
    const changed = diff.body!["changed"] as Array<Record<string, unknown>>
    assert.deepStrictEqual(changed.map(({ path, kind, size, mode, previousKind, previousSize, previousMode, target, previousTarget }) => ({ path, kind, size, mode, previousKind, previousSize, previousMode, target, previousTarget })), [
      { path: "links/run", kind: "symlink", size: 0, mode: "0644", previousKind: "symlink", previousSize: 0, previousMode: "0644", target: "../secrets/key.pem", previousTarget: "../run.sh" },
      { path: "run.sh", kind: "file", size: 18, mode: "0700", previousKind: "file", previousSize: 18, previousMode: "0755", target: undefined, previousTarget: undefined }
    ])
  })
})
