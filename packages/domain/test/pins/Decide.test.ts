import { PinJob } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { given } from "../DeciderSpec.ts"

const at = "2026-11-28T10:00:00.000Z"
const queued = new PinJob.PinJobQueued({
  jobId: "j1",
  workspaceId: "w1",
  userId: "u1",
  network: "public",
  cid: "bafkqaaa",
  name: "n",
  groupId: null,
  keyvalues: {},
  hostNodes: [],
  at
})
const retrieving = new PinJob.PinJobRetrieving({ jobId: "j1", at })
const pinned = new PinJob.PinJobPinned({ jobId: "j1", fileId: "f1", size: 3, at })
const failed = new PinJob.PinJobFailed({ jobId: "j1", reason: "block lies", at })
const cancelled = new PinJob.PinJobCancelled({ jobId: "j1", at })

describe("a pin job", () => {
  it("is queued once", () => {
    const { _tag, ...fields } = queued
    given(PinJob.decider).when(new PinJob.QueuePin(fields)).then([queued])
    given(PinJob.decider, [queued]).when(new PinJob.QueuePin(fields)).thenFails(new PinJob.PinJobExists({ jobId: "j1" }))
  })

  it("goes retrieving once (a resumed job records nothing more), then pinned or failed", () => {
    given(PinJob.decider, [queued]).when(new PinJob.StartRetrieving({ jobId: "j1", at })).then([retrieving])
    given(PinJob.decider, [queued, retrieving]).when(new PinJob.StartRetrieving({ jobId: "j1", at })).then([])
    given(PinJob.decider, [queued, retrieving]).when(new PinJob.MarkPinned({ jobId: "j1", fileId: "f1", size: 3, at })).then([pinned])
    given(PinJob.decider, [queued, retrieving]).when(new PinJob.MarkFailed({ jobId: "j1", reason: "block lies", at })).then([failed])
  })

  it("is worked on by one node: its own after a restart, another only by taking it from the node whose lease expired", () => {
    const onA = new PinJob.PinJobQueued({ ...queued, node: "a" })
    const retrievingOnA = new PinJob.PinJobRetrieving({ jobId: "j1", node: "a", at })
    const retrievingOnB = new PinJob.PinJobRetrieving({ jobId: "j1", node: "b", at })
    given(PinJob.decider, [onA]).when(new PinJob.StartRetrieving({ jobId: "j1", node: "a", at })).then([retrievingOnA])
    given(PinJob.decider, [onA, retrievingOnA]).when(new PinJob.StartRetrieving({ jobId: "j1", node: "a", at })).then([])
    given(PinJob.decider, [onA]).when(new PinJob.StartRetrieving({ jobId: "j1", node: "b", at }))
      .thenFails(new PinJob.PinJobTaken({ jobId: "j1", node: "a" }))
    given(PinJob.decider, [onA, retrievingOnA]).when(new PinJob.StartRetrieving({ jobId: "j1", node: "b", at, takeFrom: "c" }))
      .thenFails(new PinJob.PinJobTaken({ jobId: "j1", node: "a" }))
    given(PinJob.decider, [onA, retrievingOnA]).when(new PinJob.StartRetrieving({ jobId: "j1", node: "b", at, takeFrom: "a" })).then([retrievingOnB])
    // Taken once: the node that lost the race to take it finds it another's.
    given(PinJob.decider, [onA, retrievingOnA, retrievingOnB]).when(new PinJob.StartRetrieving({ jobId: "j1", node: "c", at, takeFrom: "a" }))
      .thenFails(new PinJob.PinJobTaken({ jobId: "j1", node: "b" }))
    // A job recorded before nodes were is any node's: the first to resume it records itself.
    given(PinJob.decider, [queued, retrieving]).when(new PinJob.StartRetrieving({ jobId: "j1", node: "a", at })).then([retrievingOnA])
  })

  it("records no progress once finished: a cancelled job is never pinned", () => {
    given(PinJob.decider, [queued, retrieving, cancelled]).when(new PinJob.MarkPinned({ jobId: "j1", fileId: "f1", size: 3, at }))
      .thenFails(new PinJob.PinJobFinished({ jobId: "j1", current: "cancelled" }))
    given(PinJob.decider, [queued, pinned]).when(new PinJob.StartRetrieving({ jobId: "j1", at }))
      .thenFails(new PinJob.PinJobFinished({ jobId: "j1", current: "pinned" }))
    given(PinJob.decider).when(new PinJob.MarkFailed({ jobId: "j1", reason: "x", at })).thenFails(new PinJob.PinJobNotFound({ jobId: "j1" }))
  })

  it("is cancelled by its own workspace while open; a finished one only when asked to remove it (the Pinning Service API)", () => {
    given(PinJob.decider, [queued]).when(new PinJob.CancelPin({ jobId: "j1", workspaceId: "w1", at })).then([cancelled])
    given(PinJob.decider, [queued]).when(new PinJob.CancelPin({ jobId: "j1", workspaceId: "w2", at })).thenFails(new PinJob.PinJobNotFound({ jobId: "j1" }))
    given(PinJob.decider, [queued, pinned]).when(new PinJob.CancelPin({ jobId: "j1", workspaceId: "w1", at }))
      .thenFails(new PinJob.PinJobFinished({ jobId: "j1", current: "pinned" }))
    given(PinJob.decider, [queued, pinned]).when(new PinJob.CancelPin({ jobId: "j1", workspaceId: "w1", at, evenIfFinished: true })).then([cancelled])
    given(PinJob.decider, [queued, cancelled]).when(new PinJob.CancelPin({ jobId: "j1", workspaceId: "w1", at, evenIfFinished: true }))
      .thenFails(new PinJob.PinJobFinished({ jobId: "j1", current: "cancelled" }))
  })

  it("says why it refuses with documented statuses", () => {
    assert.strictEqual(new PinJob.PinJobNotFound({ jobId: "j" }).status, 404)
    assert.strictEqual(new PinJob.PinJobFinished({ jobId: "j", current: "pinned" }).message, "Pin job is already pinned")
  })
})
