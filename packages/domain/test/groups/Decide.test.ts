import { Group } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { given } from "../DeciderSpec.ts"

const at = "2026-11-22T10:00:00.000Z"
const groupId = "g1"
const owner = { workspaceId: "w1", network: "public" as const }
const created = new Group.GroupCreated({ groupId, ...owner, name: "Album", isPublic: false, at })
const deleted = new Group.GroupDeleted({ groupId, ...owner, at })

describe("a group", () => {
  it("is created once, and a second create under its id is refused", () => {
    given(Group.decider).when(new Group.CreateGroup({ groupId, ...owner, name: "Album", isPublic: false, at })).then([created])
    given(Group.decider, [created]).when(new Group.CreateGroup({ groupId, ...owner, name: "Other", isPublic: true, at }))
      .thenFails(new Group.GroupAlreadyExists({ groupId }))
  })

  it("is renamed or marked public, keeping what an update does not name; an update that changes nothing records nothing", () => {
    const rename = given(Group.decider, [created]).when(new Group.UpdateGroup({ groupId, ...owner, name: "Photos", at }))
    rename.then([new Group.GroupUpdated({ groupId, name: "Photos", at })])
    const renamed = Result.getOrThrow(rename.state())
    assert.isTrue(renamed._tag === "Active" && renamed.group.name === "Photos" && renamed.group.isPublic === false)
    given(Group.decider, [created]).when(new Group.UpdateGroup({ groupId, ...owner, isPublic: true, at }))
      .then([new Group.GroupUpdated({ groupId, isPublic: true, at })])
    given(Group.decider, [created]).when(new Group.UpdateGroup({ groupId, ...owner, name: "Album", isPublic: false, at })).then([])
  })

  it("is not found by another workspace, on the other network, or once deleted: 404 Group not found", () => {
    for (const [history, caller] of [
      [[created], { workspaceId: "w2", network: "public" as const }],
      [[created], { workspaceId: "w1", network: "private" as const }],
      [[created, deleted], owner],
      [[], owner]
    ] as const) {
      const require = given(Group.decider, history).when(new Group.RequireGroup({ groupId, ...caller }))
      require.thenFails(new Group.GroupNotFound({ groupId }))
      const error = Result.getFailure(require.decision)
      assert.isTrue(error._tag === "Some" && error.value.status === 404 && error.value.message === "Group not found")
      given(Group.decider, history).when(new Group.UpdateGroup({ groupId, ...caller, name: "x", at })).thenFails(new Group.GroupNotFound({ groupId }))
      given(Group.decider, history).when(new Group.DeleteGroup({ groupId, ...caller, at })).thenFails(new Group.GroupNotFound({ groupId }))
    }
  })

  it("is required by its own workspace on its network without recording anything, and deleted once", () => {
    given(Group.decider, [created]).when(new Group.RequireGroup({ groupId, ...owner })).then([])
    const remove = given(Group.decider, [created]).when(new Group.DeleteGroup({ groupId, ...owner, at }))
    remove.then([deleted])
    assert.strictEqual(Result.getOrThrow(remove.state())._tag, "Deleted")
  })

  it("has a name that is not blank, at most 255 characters, without control characters", () => {
    assert.deepStrictEqual(Group.validateName("My Album"), Result.succeed("My Album"))
    assert.deepStrictEqual(Group.validateName("é".repeat(255)), Result.succeed("é".repeat(255)))
    const detail = (name: string) => Result.match(Group.validateName(name), { onSuccess: () => "", onFailure: (e) => e.message })
    assert.strictEqual(detail("   "), "Validation failed: name must not be blank")
    assert.strictEqual(detail("x".repeat(256)), "Validation failed: name must be at most 255 characters")
    assert.strictEqual(detail("a\nb"), "Validation failed: name must not contain control characters")
  })
})
