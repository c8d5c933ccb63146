import { Snapshot } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { given } from "../DeciderSpec.ts"

const at = (minute: number) => `2026-11-23T10:${String(minute).padStart(2, "0")}:00.000Z`
const summary = { added: 1, modified: 0, deleted: 0, bytesAdded: 10 }
const record = (cid: string, trigger: Snapshot.Trigger, minute: number, keep = 50) =>
  new Snapshot.RecordSnapshot({ agentId: "a1", workspaceId: "w1", snapshotCid: cid, trigger, changeSummary: summary, files: 1, bytes: 10, keep, at: at(minute) })
const taken = (sequence: number, cid: string, trigger: Snapshot.Trigger, minute: number) =>
  new Snapshot.SnapshotTaken({ agentId: "a1", workspaceId: "w1", sequence, snapshotCid: cid, trigger, changeSummary: summary, files: 1, bytes: 10, at: at(minute) })

describe("the snapshot history", () => {
  it("records a snapshot with the next sequence number, and not again while the workspace is unchanged", () => {
    given(Snapshot.decider).when(record("c1", "manual", 1)).then([taken(1, "c1", "manual", 1)])
    given(Snapshot.decider, [taken(1, "c1", "manual", 1)]).when(record("c1", "auto", 2)).then([])
    given(Snapshot.decider, [taken(1, "c1", "manual", 1)]).when(record("c2", "auto", 2)).then([taken(2, "c2", "auto", 2)])
  })

  it("always records a pre-reset snapshot, even of an unchanged workspace: it is the reset's undo", () => {
    given(Snapshot.decider, [taken(1, "c1", "manual", 1)]).when(record("c1", "pre-reset", 2)).then([taken(2, "c1", "pre-reset", 2)])
  })

  it("keeps the newest N manual and automatic snapshots and every pre-reset one; older ones expire in the same decision", () => {
    const history = [taken(1, "c1", "auto", 1), taken(2, "c2", "pre-reset", 2), taken(3, "c3", "auto", 3)]
    given(Snapshot.decider, history).when(record("c4", "manual", 4, 2)).then([
      taken(4, "c4", "manual", 4),
      new Snapshot.SnapshotsExpired({ agentId: "a1", sequences: [1], reason: "retention", at: at(4) })
    ])
    const state = given(Snapshot.decider, history).when(record("c4", "manual", 4, 2)).state()
    assert.deepStrictEqual(Result.map(state, (s) => s.kept.map((k) => k.sequence)), Result.succeed([2, 3, 4]))
    // A pre-reset snapshot pushes nothing out: the snapshot a reset goes to stays.
    given(Snapshot.decider, [taken(1, "c1", "auto", 1), taken(2, "c2", "auto", 2)]).when(record("c3", "pre-reset", 3, 2)).then([taken(3, "c3", "pre-reset", 3)])
  })

  it("resets only to a kept snapshot: an expired or unknown CID is Snapshot not found", () => {
    const history = [taken(1, "c1", "auto", 1), taken(2, "c2", "auto", 2), new Snapshot.SnapshotsExpired({ agentId: "a1", sequences: [1], reason: "retention", at: at(3) })]
    const reset = (cid: string) => new Snapshot.RecordReset({ agentId: "a1", workspaceId: "w1", snapshotCid: cid, preResetCid: "c9", at: at(4) })
    given(Snapshot.decider, history).when(reset("c2")).then([new Snapshot.WorkspaceReset({ agentId: "a1", workspaceId: "w1", snapshotCid: "c2", preResetCid: "c9", at: at(4) })])
    given(Snapshot.decider, history).when(reset("c1")).thenFails(new Snapshot.SnapshotNotFound({ snapshotCid: "c1" }))
    given(Snapshot.decider, history).when(reset("c7")).thenFails(new Snapshot.SnapshotNotFound({ snapshotCid: "c7" }))
  })

  it("expires everything once the agent is gone, and nothing when there is nothing kept", () => {
    const history = [taken(1, "c1", "auto", 1), taken(2, "c2", "pre-reset", 2)]
    const expireAll = new Snapshot.ExpireAll({ agentId: "a1", reason: "agent-deleted", at: at(9) })
    given(Snapshot.decider, history).when(expireAll).then([
      new Snapshot.SnapshotsExpired({ agentId: "a1", sequences: [1, 2], reason: "agent-deleted", at: at(9) })
    ])
    given(Snapshot.decider).when(expireAll).then([])
  })
})

describe("what a snapshot changed", () => {
  it("counts files added, modified and deleted, and the bytes of new content", () => {
    const before = new Map([["a", { cid: "x", size: 5 }], ["b", { cid: "y", size: 7 }], ["c", { cid: "z", size: 1 }]])
    const after = new Map([["a", { cid: "x", size: 5 }], ["b", { cid: "y2", size: 8 }], ["d", { cid: "w", size: 100 }]])
    assert.deepStrictEqual(Snapshot.changeSummary(before, after), { added: 1, modified: 1, deleted: 1, bytesAdded: 108 })
  })
})

describe("the reset body", () => {
  it("names a well-formed CID, kept canonical; anything else is Invalid snapshot CID", () => {
    const v1 = "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi"
    assert.deepStrictEqual(Snapshot.resetTarget(JSON.stringify({ snapshotCid: v1 })), Result.succeed(v1))
    for (const body of ["", "not json", "{}", JSON.stringify({ snapshotCid: 42 }), JSON.stringify({ snapshotCid: " " }), JSON.stringify({ snapshotCid: "bafy-nope" }), "null"]) {
      assert.isTrue(Result.isFailure(Snapshot.resetTarget(body)), body)
    }
  })
})

describe("exclusions", () => {
  it("match a name anywhere, or a whole path from the root, dot files included", () => {
    const excluded = Snapshot.matcher([...Snapshot.defaultExclusions, "skills/*/cache"])
    for (const path of ["node_modules", "a/b/node_modules", ".cache", "x/.cache", "gateway.pid", "d/f.tmp", "d/f.tmp.123", "skills/web/cache"]) {
      assert.isTrue(excluded(path), path)
    }
    for (const path of ["MEMORY.md", "node_modules_notes.md", "skills/web/SKILL.md", "cache", "a/skills/web/cache"]) {
      assert.isFalse(excluded(path), path)
    }
    assert.isFalse(Snapshot.matcher([])("node_modules"))
  })

  it("are read from a comma-separated setting; an absolute one is refused", () => {
    assert.deepStrictEqual(Snapshot.parsePatterns(" node_modules, ,*.log "), Result.succeed(["node_modules", "*.log"]))
    assert.isTrue(Result.isFailure(Snapshot.parsePatterns("/etc")))
  })
})
