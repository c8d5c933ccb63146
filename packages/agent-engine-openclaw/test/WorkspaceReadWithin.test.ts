/**
 * Workspace.readFileWithin on disk, for what the contract cannot set up through the port: symlinks (in and out of
 * the workspace), FIFOs and other non-regular files.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Workspace from "../src/Workspace.ts"

const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-read-within-"))
afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))

describe("Workspace.readFileWithin", () => {
  const workspace = Path.join(root, "workspace")
  const location = { home: root, workspace }
  Fs.mkdirSync(Path.join(workspace, "docs"), { recursive: true })
  Fs.writeFileSync(Path.join(workspace, "docs", "a.txt"), "inside")
  Fs.writeFileSync(Path.join(root, "outside.txt"), "outside")
  Fs.symlinkSync(Path.join(workspace, "docs", "a.txt"), Path.join(workspace, "link-in.txt"))
  Fs.symlinkSync(Path.join(root, "outside.txt"), Path.join(workspace, "link-out.txt"))
  Fs.symlinkSync(root, Path.join(workspace, "folder-out"))
  Fs.symlinkSync(Path.join(workspace, "nothing"), Path.join(workspace, "dangling"))
  execFileSync("mkfifo", [Path.join(workspace, "pipe")])

  it("follows a symlink that stays inside the workspace", async () => {
    const read = await Workspace.readFileWithin(location, "link-in.txt", 100)
    assert.strictEqual(read._tag, "Found")
    if (read._tag === "Found") assert.strictEqual(new TextDecoder().decode(read.content), "inside")
    assert.deepStrictEqual(await Workspace.readFileWithin(location, "link-in.txt", 5), { _tag: "TooLarge", size: 6 })
  })

  it("refuses symlinks leading out of the workspace, to a file or through a folder", async () => {
    for (const path of ["link-out.txt", "folder-out/outside.txt"]) {
      const error = await Workspace.readFileWithin(location, path, 100).then(() => undefined, (cause: unknown) => cause)
      assert.instanceOf(error, Workspace.WorkspaceEscape, path)
    }
  })

  it("reads no FIFO (without blocking on it), and nothing behind a dangling symlink: Missing", async () => {
    assert.deepStrictEqual(await Workspace.readFileWithin(location, "pipe", 100), { _tag: "Missing" })
    assert.deepStrictEqual(await Workspace.readFileWithin(location, "dangling", 100), { _tag: "Missing" })
    assert.deepStrictEqual(await Workspace.readFileWithin({ home: root, workspace: Path.join(root, "no-workspace") }, "a.txt", 100), { _tag: "Missing" })
  })

  it("reads a file bigger than a read chunk whole", async () => {
    const bytes = new Uint8Array(200_000).map((_, index) => index % 251)
    Fs.writeFileSync(Path.join(workspace, "big.bin"), bytes)
    const read = await Workspace.readFileWithin(location, "big.bin", 200_000)
    assert.strictEqual(read._tag, "Found")
    if (read._tag === "Found") assert.isTrue(Buffer.from(read.content).equals(Buffer.from(bytes)))
    assert.deepStrictEqual(await Workspace.readFileWithin(location, "big.bin", 199_999), { _tag: "TooLarge", size: 200_000 })
  })
})
