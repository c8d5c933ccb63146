import { Cid, CidRecord } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { given } from "../DeciderSpec.ts"

const cid = "bafkreih5aznjvttude6c3wbvqeebb6rlx5wkbzyppv7garjiubll2ceym4"
const at = "2026-11-22T10:00:00.000Z"
const network = "public" as const
const uploaded = (workspaceId: string, fileId: string, when = at) => new CidRecord.CidUploaded({ cid, network, workspaceId, fileId, at: when })
const released = (workspaceId: string, fileId: string) => new CidRecord.CidReleased({ cid, network, workspaceId, fileId, at })
const signed = (workspaceId: string) => new CidRecord.SignatureAdded({ cid, network, workspaceId, address: "0xabc", signature: "0x01", at })
const sign = (workspaceId: string, verified = true) =>
  new CidRecord.AddSignature({ cid, network, workspaceId, address: "0xabc", signature: "0x01", verified, at })
const unsign = (workspaceId: string) => new CidRecord.RemoveSignature({ cid, network, workspaceId, at })
const after = (events: ReadonlyArray<CidRecord.CidEvent>) => events.reduce(CidRecord.evolve, CidRecord.initial)

describe("a CID's files", () => {
  it("are recorded as they are uploaded, each once", () => {
    const record = new CidRecord.RecordCidUpload({ cid, network, workspaceId: "w1", fileId: "f1", at })
    given(CidRecord.decider).when(record).then([uploaded("w1", "f1")])
    given(CidRecord.decider, [uploaded("w1", "f1")]).when(record).then([])
  })

  it("are released when deleted, and a file that is not live has nothing to release", () => {
    const release = new CidRecord.ReleaseCid({ cid, network, workspaceId: "w1", fileId: "f1", at })
    given(CidRecord.decider, [uploaded("w1", "f1")]).when(release).then([released("w1", "f1")])
    given(CidRecord.decider, [uploaded("w1", "f1"), released("w1", "f1")]).when(release).then([])
    given(CidRecord.decider).when(release).then([])
  })
})

describe("signing a CID", () => {
  it("covers the date the CID was first uploaded, not a later upload", () => {
    const state = after([uploaded("w1", "f1", "2026-01-01T00:00:00.000Z"), uploaded("w1", "f2", "2026-02-01T00:00:00.000Z")])
    assert.deepStrictEqual(CidRecord.signableBy(state, cid, "w1"), Result.succeed("2026-01-01T00:00:00.000Z"))
  })

  it("is refused to a workspace that holds the CID but did not upload it first", () => {
    given(CidRecord.decider, [uploaded("w1", "f1"), uploaded("w2", "f2")]).when(sign("w2")).thenFails(new CidRecord.CidNotOwned({ cid }))
  })

  it("is refused with 403 once the first uploader deleted every file of it", () => {
    const refused = given(CidRecord.decider, [uploaded("w1", "f1"), released("w1", "f1")]).when(sign("w1"))
    refused.thenFails(new CidRecord.CidNotOwned({ cid }))
    const error = Result.getFailure(refused.decision)
    assert.isTrue(error._tag === "Some" && error.value.status === 403)
  })

  it("stays open to the first uploader while it still holds one of its files", () => {
    given(CidRecord.decider, [uploaded("w1", "f1"), uploaded("w1", "f2"), released("w1", "f1")]).when(sign("w1")).then([signed("w1")])
  })

  it("is refused with 400 when the signature does not verify, and accepted once when it does", () => {
    const bad = given(CidRecord.decider, [uploaded("w1", "f1")]).when(sign("w1", false))
    bad.thenFails(new CidRecord.SignatureDoesNotVerify({ cid }))
    const error = Result.getFailure(bad.decision)
    assert.isTrue(error._tag === "Some" && error.value.status === 400 && error.value.message.startsWith("Validation failed: "))
    given(CidRecord.decider, [uploaded("w1", "f1")]).when(sign("w1")).then([signed("w1")])
    const again = given(CidRecord.decider, [uploaded("w1", "f1"), signed("w1")]).when(sign("w1"))
    again.thenFails(new CidRecord.CidAlreadySigned({ cid }))
    const conflict = Result.getFailure(again.decision)
    assert.isTrue(conflict._tag === "Some" && conflict.value.status === 409)
  })

  it("can be undone only by the signing workspace, and only when there is a signature", () => {
    const history = [uploaded("w1", "f1"), uploaded("w2", "f2"), signed("w1")]
    given(CidRecord.decider, history).when(unsign("w2")).thenFails(new CidRecord.CidNotOwned({ cid }))
    const removed = new CidRecord.SignatureRemoved({ cid, network, workspaceId: "w1", at })
    given(CidRecord.decider, history).when(unsign("w1")).then([removed])
    const none = given(CidRecord.decider, [...history, removed]).when(unsign("w1"))
    none.thenFails(new CidRecord.SignatureNotFound({ cid }))
    const error = Result.getFailure(none.decision)
    assert.isTrue(error._tag === "Some" && error.value.status === 404)
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
