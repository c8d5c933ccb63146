import { Cid, File } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"

const at = "2026-11-22T10:00:00.000Z"
const stored = [new File.FileUploaded({
  fileId: "f1", workspaceId: "w1", userId: "u1", network: "private", cid: "bafy", name: "a.txt", size: 3,
  mimeType: "text/plain", groupId: null, keyvalues: { env: "dev" }, numberOfFiles: 1, at
})].reduce(File.evolve, File.initial)

describe("a file", () => {
  it("is not found by another workspace, nor on the other network", () => {
    for (const caller of [{ workspaceId: "w2", network: "private" as const }, { workspaceId: "w1", network: "public" as const }]) {
      const error = Result.getFailure(File.update(stored, caller, { fileId: "f1", name: "b", at }))
      assert.isTrue(error._tag === "Some" && error.value.status === 404 && error.value.message === "File not found")
    }
  })

  it("keeps what an update does not name, and is gone after a delete", () => {
    const events = Result.getOrThrow(File.update(stored, { workspaceId: "w1", network: "private" }, { fileId: "f1", name: "b.txt", at }))
    const updated = events.reduce(File.evolve, stored)
    assert.isTrue(updated._tag === "Stored" && updated.file.name === "b.txt" && updated.file.keyvalues["env"] === "dev")
    const { events: deleted } = Result.getOrThrow(File.remove(updated, { workspaceId: "w1", network: "private" }, "f1", at))
    assert.strictEqual(deleted.reduce(File.evolve, updated)._tag, "Deleted")
  })
})

describe("a CID", () => {
  it("decodes to one canonical form whatever base it was written in, and rejects anything else", () => {
    const decode = Schema.decodeUnknownSync(Cid)
    const v0 = "QmPZ9gcCEpqKTo6aq61g2nXGUhM4iCL3ewB6LDXZCtioEB"
    assert.strictEqual(decode(v0), v0)
    assert.strictEqual(decode("zdj7WWeQ43G6JJvLWQWZpyHuAMq6uYWRjkBXFad11vE2LHhQ7"), "bafybeiasb5vpmaounyilfuxbd3lryvosl4yefqrfahsb2esg46q6tu6y5q")
    assert.throws(() => decode("not-a-cid"), /is not a valid CID/)
  })
})
