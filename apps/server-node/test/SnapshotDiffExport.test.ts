/**
 * A snapshot compared with another (`GET …/snapshots/{cid}/diff?against=`) and exported (`GET …/export?format=car|
 * tar.gz`) through a real server process with the simulated engine. What comes back is checked with other code than
 * Cairn's: the CAR with @ipld/car (every block hashed against its CID) and @helia/unixfs over a blockstore filled
 * from it, the tar with the system `tar`; the diff against what @helia/unixfs lists of the two snapshots' CARs.
 */
import { unixfs } from "@helia/unixfs"
import { CarReader } from "@ipld/car"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { MemoryBlockstore } from "blockstore-core"
import { equals } from "multiformats/bytes"
import { CID } from "multiformats/cid"
import { sha256 } from "multiformats/hashes/sha2"
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { newApiUser, type ServerProcess, startServer, waitUntilServing } from "../src/testing/index.ts"

const dataDir = mkdtempSync(join(tmpdir(), "cairn-snapshot-export-"))
const scratch = mkdtempSync(join(tmpdir(), "cairn-snapshot-export-out-"))
// No automatic snapshots: the only ones are those the test takes.
const env = { DATA_DIR: dataDir, ENGINE: "simulated", SIMULATED_START_DELAY: "100 millis", SNAPSHOT_INTERVAL: "0" }
let server: ServerProcess

afterAll(async () => {
  if (server !== undefined && server.child.exitCode === null) {
    server.child.kill("SIGTERM")
    await server.exited
  }
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(scratch, { recursive: true, force: true })
})

/** What an entry of a tree is, as a reader other than Cairn sees it. */
interface Seen {
  readonly kind: "file" | "directory" | "symlink"
  readonly mode: number
  readonly cid?: string
  readonly bytes?: Uint8Array
  readonly target?: string
}

/** A CAR parsed by @ipld/car: its roots, and its blocks in a fresh blockstore, each checked against its CID. */
const readCar = async (car: Uint8Array) => {
  const reader = await CarReader.fromBytes(car)
  const blocks = new MemoryBlockstore()
  let count = 0
  for await (const block of reader.blocks()) {
    assert.strictEqual(block.cid.multihash.code, sha256.code, `${block.cid} is not a sha2-256 CID`)
    const digest = await sha256.digest(block.bytes)
    assert.isTrue(equals(digest.bytes, block.cid.multihash.bytes), `block ${block.cid} does not hash to its CID`)
    await blocks.put(block.cid, block.bytes)
    count++
  }
  return { roots: (await reader.getRoots()).map(String), blocks, count }
}

/** Every entry under `root`, by path, as @helia/unixfs reads it from nothing but `blocks`. */
const seenByHelia = async (blocks: MemoryBlockstore, root: string) => {
  const fs = unixfs({ blockstore: blocks })
  const seen = new Map<string, Seen>()
  const visit = async (cid: CID, prefix: string): Promise<void> => {
    for await (const entry of fs.ls(cid, { offline: true })) {
      const path = `${prefix}${entry.name}`
      const stat = await fs.stat(entry.cid, { offline: true })
      if (stat.type === "directory") {
        seen.set(path, { kind: "directory", mode: stat.mode & 0o7777 })
        await visit(entry.cid, `${path}/`)
      } else if (stat.unixfs?.type === "symlink") {
        seen.set(path, { kind: "symlink", mode: stat.mode & 0o7777, cid: entry.cid.toString(), target: new TextDecoder().decode(stat.unixfs.data) })
      } else {
        const pieces: Array<Uint8Array> = []
        for await (const piece of fs.cat(entry.cid, { offline: true })) pieces.push(piece)
        // A raw block stores no mode: UnixFS's default.
        seen.set(path, { kind: "file", mode: stat.type === "raw" ? 0o644 : stat.mode & 0o7777, cid: entry.cid.toString(), bytes: Buffer.concat(pieces) })
      }
    }
  }
  await visit(CID.parse(root), "")
  return seen
}

/** Every entry under `directory`, by relative path, as the filesystem has it after `tar` extracted it there. */
const seenOnDisk = (directory: string) => {
  const seen = new Map<string, Seen>()
  for (const entry of readdirSync(directory, { recursive: true, withFileTypes: true })) {
    const full = join(entry.parentPath, entry.name)
    const path = relative(directory, full)
    const stat = lstatSync(full)
    const mode = stat.mode & 0o7777
    if (entry.isSymbolicLink()) seen.set(path, { kind: "symlink", mode: 0o644, target: readlinkSync(full) })
    else if (entry.isDirectory()) seen.set(path, { kind: "directory", mode })
    else seen.set(path, { kind: "file", mode, bytes: readFileSync(full) })
  }
  return seen
}

/** Files and symlinks (what a diff names), by path: kind, size and CID. */
const leaves = (tree: ReadonlyMap<string, Seen>) =>
  new Map([...tree].filter(([, entry]) => entry.kind !== "directory").map(([path, entry]) => [path, entry]))

describe("snapshot diff and export", () => {
  it("diffs two snapshots and exports them as a CAR and a tar.gz that other tools read back; refuses what is not the agent's", async () => {
    server = await startServer(env)
    await waitUntilServing(server)
    const ops = { url: server.url, dataDir }
    const owner = newApiUser(ops, { workspace: "Snapshot export", agentLimit: 1, scopes: "org:agents" })
    const stranger = newApiUser(ops, { workspace: "Someone else", agentLimit: 1, scopes: "org:agents" })
    const { call } = owner

    const created = await call("POST", "/v0/agents", { name: "exporter" })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const agentId = created.body.agent.agentId as string
    const agentPath = `/v0/agents/${agentId}`
    const upload = async (filename: string, content: Uint8Array) => {
      const uploaded = await call("POST", `${agentPath}/files/upload`, { filename, contentBase64: Buffer.from(content).toString("base64") })
      assert.isBelow(uploaded.status, 300, JSON.stringify(uploaded.body))
    }
    const sync = async (api = owner, path = agentPath) => {
      const synced = await api.call("POST", `${path}/snapshots/sync`)
      assert.strictEqual(synced.status, 200, JSON.stringify(synced.body))
      return synced.body.snapshotCid as string
    }

    // Bytes of their own each run, several 1 MiB chunks for the big file.
    const big = randomBytes(3 * 1_048_576 + 123)
    const notesBefore = Buffer.from(`first version ${randomBytes(4).toString("hex")}\n`)
    const notesAfter = Buffer.from(`second, longer version ${randomBytes(8).toString("hex")}\n`)
    const added = Buffer.from(`added later ${randomBytes(4).toString("hex")}\n`)
    await upload("big.bin", big)
    await upload("notes.txt", notesBefore)
    await upload("kept.txt", Buffer.from("kept as it is\n"))
    const first = await sync()
    await upload("notes.txt", notesAfter)
    await upload("added.txt", added)
    const second = await sync()
    assert.notStrictEqual(first, second)

    // The CAR of each, read with @ipld/car and @helia/unixfs alone.
    const exportCar = async (cid: string) => {
      const response = await fetch(`${server.url}${agentPath}/snapshots/${cid}/export?format=car`, { headers: { authorization: `Bearer ${owner.token}` } })
      assert.strictEqual(response.status, 200, await response.clone().text())
      assert.match(response.headers.get("content-type") ?? "", /^application\/vnd\.ipld\.car/)
      assert.strictEqual(response.headers.get("content-disposition"), `attachment; filename="${agentId}-${cid}.car"`)
      const car = await readCar(new Uint8Array(await response.arrayBuffer()))
      assert.deepStrictEqual(car.roots, [cid])
      return { ...car, tree: await seenByHelia(car.blocks, cid) }
    }
    const before = await exportCar(first)
    const after = await exportCar(second)
    assert.isTrue(equals(after.tree.get("uploads/big.bin")!.bytes!, big))
    assert.isTrue(equals(after.tree.get("uploads/notes.txt")!.bytes!, notesAfter))
    assert.isTrue(equals(after.tree.get("uploads/added.txt")!.bytes!, added))
    assert.isTrue(equals(before.tree.get("uploads/notes.txt")!.bytes!, notesBefore))
    assert.isFalse(before.tree.has("uploads/added.txt"))
    // 3 MiB and more: four raw leaves and the file's root at least.
    assert.isAtLeast(after.count, 5)

    // The diff, and the one @helia/unixfs's listings of the two CARs give.
    const diff = await call("GET", `${agentPath}/snapshots/${second}/diff?against=${first}`)
    assert.strictEqual(diff.status, 200, JSON.stringify(diff.body))
    assert.deepInclude(diff.body, { agentId, snapshotCid: second, against: first })
    assert.deepStrictEqual(diff.body.added, [{ path: "uploads/added.txt", kind: "file", size: added.length, cid: after.tree.get("uploads/added.txt")!.cid, mode: "0644" }])
    assert.deepStrictEqual(diff.body.removed, [])
    assert.deepStrictEqual(diff.body.changed, [{
      path: "uploads/notes.txt",
      kind: "file",
      size: notesAfter.length,
      cid: after.tree.get("uploads/notes.txt")!.cid,
      mode: "0644",
      previousKind: "file",
      previousSize: notesBefore.length,
      previousCid: before.tree.get("uploads/notes.txt")!.cid,
      previousMode: "0644"
    }])
    const [old, now] = [leaves(before.tree), leaves(after.tree)]
    const sizeOf = (entry: Seen) => entry.bytes?.length ?? 0
    const expected: Record<"added" | "removed" | "changed", Array<{ path: string; size: number; previousSize?: number }>> = {
      added: [...now].filter(([path]) => !old.has(path)).map(([path, entry]) => ({ path, size: sizeOf(entry) })),
      removed: [...old].filter(([path]) => !now.has(path)).map(([path, entry]) => ({ path, size: sizeOf(entry) })),
      changed: [...now].filter(([path, entry]) => old.has(path) && old.get(path)!.cid !== entry.cid)
        .map(([path, entry]) => ({ path, size: sizeOf(entry), previousSize: sizeOf(old.get(path)!) }))
    }
    const brief = (entries: Array<{ path: string; size: number; previousSize?: number }>): Array<{ path: string; size: number; previousSize?: number }> =>
      entries.map(({ path, size, previousSize }) => previousSize === undefined ? { path, size } : { path, size, previousSize })
    assert.deepStrictEqual({ added: brief(diff.body.added), removed: brief(diff.body.removed), changed: brief(diff.body.changed) }, expected)
    // The other way round: what was added is removed.
    const reverse = await call("GET", `${agentPath}/snapshots/${first}/diff?against=${second}`)
    assert.strictEqual(reverse.status, 200, JSON.stringify(reverse.body))
    assert.deepStrictEqual(brief(reverse.body.removed), [{ path: "uploads/added.txt", size: added.length }])
    assert.deepStrictEqual(reverse.body.added, [])
    assert.deepStrictEqual((await call("GET", `${agentPath}/snapshots/${second}/diff?against=${second}`)).body.changed, [])

    // The tar.gz, extracted by the system `tar`: the same tree @helia/unixfs read from the CAR, modes and all.
    const response = await fetch(`${server.url}${agentPath}/snapshots/${second}/export?format=tar.gz`, { headers: { authorization: `Bearer ${owner.token}` } })
    assert.strictEqual(response.status, 200, await response.clone().text())
    assert.strictEqual(response.headers.get("content-type"), "application/gzip")
    assert.strictEqual(response.headers.get("content-disposition"), `attachment; filename="${agentId}-${second}.tar.gz"`)
    const archive = join(scratch, "snapshot.tar.gz")
    writeFileSync(archive, new Uint8Array(await response.arrayBuffer()))
    const listed = execFileSync("tar", ["-tzvf", archive], { encoding: "utf8" })
    assert.match(listed, new RegExp(`^-rw-r--r-- 0/0 +${big.length} .* ${second}/uploads/big\\.bin$`, "m"))
    const extracted = join(scratch, "extracted")
    execFileSync("mkdir", ["-p", extracted])
    execFileSync("tar", ["-xzf", archive, "-C", extracted, "--no-same-owner", "--same-permissions"])
    assert.deepStrictEqual(readdirSync(extracted), [second])
    const onDisk = seenOnDisk(join(extracted, second))
    const fromCar = new Map([...after.tree].map(([path, { cid: _, ...entry }]) => [path, entry.bytes === undefined ? entry : { ...entry, bytes: Buffer.from(entry.bytes) }]))
    assert.deepStrictEqual(onDisk, fromCar)

    // Another workspace's agent and its snapshot: never reachable through this agent, nor this agent through theirs.
    const theirs = await stranger.call("POST", "/v0/agents", { name: "theirs" })
    assert.strictEqual(theirs.status, 201, JSON.stringify(theirs.body))
    const theirPath = `/v0/agents/${theirs.body.agent.agentId}`
    const uploaded = await stranger.call("POST", `${theirPath}/files/upload`, { filename: "secret.txt", contentBase64: Buffer.from("theirs only\n").toString("base64") })
    assert.isBelow(uploaded.status, 300)
    const foreign = await sync(stranger, theirPath)
    for (const path of [
      `${agentPath}/snapshots/${foreign}/export?format=car`,
      `${agentPath}/snapshots/${foreign}/export?format=tar.gz`,
      `${agentPath}/snapshots/${foreign}/diff?against=${first}`,
      `${agentPath}/snapshots/${second}/diff?against=${foreign}`
    ]) {
      assert.deepStrictEqual(await call("GET", path), { status: 404, body: { error: "Snapshot not found" } }, path)
    }
    assert.deepStrictEqual(await stranger.call("GET", `${agentPath}/snapshots/${second}/export?format=car`), { status: 404, body: { error: "Agent not found" } })
    assert.deepStrictEqual(await stranger.call("GET", `${agentPath}/snapshots/${second}/diff?against=${first}`), { status: 404, body: { error: "Agent not found" } })
    assert.strictEqual((await fetch(`${server.url}${agentPath}/snapshots/${second}/export?format=car`)).status, 401)

    // Bad input: 400 with the documented strings.
    const refusals: Array<[string, string]> = [
      [`${agentPath}/snapshots/${second}/export?format=zip`, "Validation failed: format must be car or tar.gz"],
      [`${agentPath}/snapshots/${second}/export`, "Validation failed: format must be car or tar.gz"],
      [`${agentPath}/snapshots/${second}/diff`, "Validation failed: against is required: the CID of the snapshot to compare with"],
      [`${agentPath}/snapshots/${second}/diff?against=not-a-cid`, "Validation failed: against is not a valid CID"],
      [`${agentPath}/snapshots/not-a-cid/diff?against=${first}`, "Invalid snapshot CID"],
      [`${agentPath}/snapshots/not-a-cid/export?format=car`, "Invalid snapshot CID"]
    ]
    for (const [path, error] of refusals) assert.deepStrictEqual(await call("GET", path), { status: 400, body: { error } }, path)
  }, 120_000)
})
