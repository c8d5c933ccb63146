import { File } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { given } from "../DeciderSpec.ts"

const at = "2026-11-22T10:00:00.000Z"
const fileId = "f1"
const upload = {
  fileId, workspaceId: "w1", userId: "u1", network: "private" as const, cid: "bafy", name: "a.txt", size: 3,
  mimeType: "text/plain", groupId: null, keyvalues: { env: "dev" }, numberOfFiles: 1, at
}
const uploaded = new File.FileUploaded(upload)
const deleted = new File.FileDeleted({ fileId, at })
const owner = { workspaceId: "w1", network: "private" as const }

describe("a file", () => {
  it("is uploaded once, and a second upload under its id is refused", () => {
    given(File.decider).when(new File.UploadFile(upload)).then([uploaded])
    given(File.decider, [uploaded]).when(new File.UploadFile(upload)).thenFails(new File.FileAlreadyExists({ fileId }))
  })

  it("is not found by another workspace, nor on the other network: 404 File not found", () => {
    for (const caller of [{ workspaceId: "w2", network: "private" as const }, { workspaceId: "w1", network: "public" as const }]) {
      const update = given(File.decider, [uploaded]).when(new File.UpdateFile({ fileId, ...caller, name: "b", at }))
      update.thenFails(new File.FileNotFound({ fileId }))
      const error = Result.getFailure(update.decision)
      assert.isTrue(error._tag === "Some" && error.value.status === 404 && error.value.message === "File not found")
      given(File.decider, [uploaded]).when(new File.DeleteFile({ fileId, ...caller, at })).thenFails(new File.FileNotFound({ fileId }))
    }
  })

  it("keeps what an update does not name, and is gone after a delete", () => {
    const update = given(File.decider, [uploaded]).when(new File.UpdateFile({ fileId, ...owner, name: "b.txt", at }))
    update.then([new File.FileUpdated({ fileId, name: "b.txt", at })])
    const updated = Result.getOrThrow(update.state())
    assert.isTrue(updated._tag === "Stored" && updated.file.name === "b.txt" && updated.file.keyvalues["env"] === "dev")
    const updates = Result.getOrThrow(update.decision)
    const remove = given(File.decider, [uploaded, ...updates]).when(new File.DeleteFile({ fileId, ...owner, at }))
    remove.then([deleted])
    assert.strictEqual(Result.getOrThrow(remove.state())._tag, "Deleted")
  })

  it("once deleted, can be neither changed nor deleted again", () => {
    given(File.decider, [uploaded, deleted]).when(new File.UpdateFile({ fileId, ...owner, name: "b", at })).thenFails(new File.FileNotFound({ fileId }))
    given(File.decider, [uploaded, deleted]).when(new File.DeleteFile({ fileId, ...owner, at })).thenFails(new File.FileNotFound({ fileId }))
  })

  it("tells its own workspace which CID it holds, and no one else", () => {
    const state = [uploaded].reduce(File.evolve, File.initial)
    assert.deepStrictEqual(Result.map(File.visible(state, fileId, "w1", "private"), (file) => file.cid), Result.succeed("bafy"))
    assert.deepStrictEqual(File.visible(state, fileId, "w2", "private"), Result.fail(new File.FileNotFound({ fileId })))
  })

  it("joins a group, leaving the one it was in; joining its own group again or leaving another records nothing", () => {
    const join = given(File.decider, [uploaded]).when(new File.AddFileToGroup({ fileId, ...owner, groupId: "g1", at }))
    join.then([new File.FileAddedToGroup({ fileId, groupId: "g1", at })])
    const joined = [new File.FileAddedToGroup({ fileId, groupId: "g1", at })]
    given(File.decider, [uploaded, ...joined]).when(new File.AddFileToGroup({ fileId, ...owner, groupId: "g1", at })).then([])
    given(File.decider, [uploaded, ...joined]).when(new File.AddFileToGroup({ fileId, ...owner, groupId: "g2", at }))
      .then([new File.FileAddedToGroup({ fileId, groupId: "g2", at })])
    given(File.decider, [uploaded, ...joined]).when(new File.RemoveFileFromGroup({ fileId, ...owner, groupId: "g2", at })).then([])
    const leave = given(File.decider, [uploaded, ...joined]).when(new File.RemoveFileFromGroup({ fileId, ...owner, groupId: "g1", at }))
    leave.then([new File.FileRemovedFromGroup({ fileId, groupId: "g1", at })])
    const left = Result.getOrThrow(leave.state())
    assert.isTrue(left._tag === "Stored" && left.file.groupId === null)
  })

  it("is not put in a group, nor taken out of one, by another workspace, on the other network, or once deleted", () => {
    for (const [history, caller] of [
      [[uploaded], { workspaceId: "w2", network: "private" as const }],
      [[uploaded], { workspaceId: "w1", network: "public" as const }],
      [[uploaded, deleted], owner]
    ] as const) {
      given(File.decider, history).when(new File.AddFileToGroup({ fileId, ...caller, groupId: "g1", at })).thenFails(new File.FileNotFound({ fileId }))
      given(File.decider, history).when(new File.RemoveFileFromGroup({ fileId, ...caller, groupId: "g1", at })).thenFails(new File.FileNotFound({ fileId }))
    }
  })
})
