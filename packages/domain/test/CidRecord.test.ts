import { CidRecord } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"

const cid = "bafkreih5aznjvttude6c3wbvqeebb6rlx5wkbzyppv7garjiubll2ceym4"
const at = "2026-11-22T10:00:00.000Z"
const uploaded = (workspaceId: string, fileId: string, when = at) =>
  new CidRecord.CidUploaded({ cid, network: "public", workspaceId, fileId, at: when })
const released = (workspaceId: string, fileId: string) =>
  new CidRecord.CidReleased({ cid, network: "public", workspaceId, fileId, at })
const after = (events: ReadonlyArray<CidRecord.CidEvent>) => events.reduce(CidRecord.evolve, CidRecord.initial)
const sign = (state: CidRecord.CidState, workspaceId: string, verified = true) =>
  CidRecord.addSignature(state, { cid, network: "public", workspaceId, address: "0xabc", signature: "0x01", verified, at })

describe("signing a CID", () => {
  it("covers the date the CID was first uploaded, not a later upload", () => {
    const state = after([uploaded("w1", "f1", "2026-01-01T00:00:00.000Z"), uploaded("w1", "f2", "2026-02-01T00:00:00.000Z")])
    assert.deepStrictEqual(CidRecord.signableBy(state, cid, "w1"), Result.succeed("2026-01-01T00:00:00.000Z"))
  })

  it("is refused to a workspace that holds the CID but did not upload it first", () => {
    const state = after([uploaded("w1", "f1"), uploaded("w2", "f2")])
    const error = Result.getFailure(sign(state, "w2"))
    assert.isTrue(error._tag === "Some" && error.value._tag === "CidNotOwned")
  })

  it("is refused once the first uploader deleted every file of it", () => {
    const error = Result.getFailure(sign(after([uploaded("w1", "f1"), released("w1", "f1")]), "w1"))
    assert.isTrue(error._tag === "Some" && error.value._tag === "CidNotOwned" && error.value.status === 403)
  })

  it("is refused when the signature does not verify, and accepted once when it does", () => {
    const state = after([uploaded("w1", "f1")])
    const bad = Result.getFailure(sign(state, "w1", false))
    assert.isTrue(bad._tag === "Some" && bad.value.status === 400 && bad.value.message.startsWith("Validation failed: "))
    const events = Result.getOrThrow(sign(state, "w1"))
    assert.strictEqual(events[0]!._tag, "SignatureAdded")
    const again = Result.getFailure(sign(after([uploaded("w1", "f1"), ...events]), "w1"))
    assert.isTrue(again._tag === "Some" && again.value._tag === "CidAlreadySigned" && again.value.status === 409)
  })

  it("can be undone only by the signing workspace, and only when there is a signature", () => {
    const signed = after([uploaded("w1", "f1"), uploaded("w2", "f2"), ...Result.getOrThrow(sign(after([uploaded("w1", "f1")]), "w1"))])
    const byOther = Result.getFailure(CidRecord.removeSignature(signed, { cid, network: "public", workspaceId: "w2", at }))
    assert.isTrue(byOther._tag === "Some" && byOther.value._tag === "CidNotOwned")
    const removed = Result.getOrThrow(CidRecord.removeSignature(signed, { cid, network: "public", workspaceId: "w1", at }))
    const none = Result.getFailure(CidRecord.removeSignature(after([uploaded("w1", "f1"), ...removed]), { cid, network: "public", workspaceId: "w1", at }))
    assert.isTrue(none._tag === "Some" && none.value._tag === "SignatureNotFound" && none.value.status === 404)
  })
})
