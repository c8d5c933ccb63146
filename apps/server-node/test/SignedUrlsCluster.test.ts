/**
 * Signed URLs on two nodes of one installation (one Postgres database, the same signing key): a private access link
 * one node signed opens the content on the other, and an altered one is refused there; a presigned upload signed on
 * one node is taken once across both, however close two uploads to different nodes come. Each node keeps the
 * files' blocks it stored (the embedded store), so the private file is uploaded to both. Runs in the Postgres pass
 * only (DATABASE_URL): the embedded database is one node's by nature.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { PinataSDK } from "pinata"
import * as Cluster from "../src/testing/Cluster.ts"
import { newApiUser, type ServerProcess } from "../src/testing/index.ts"

const databaseUrl = process.env["DATABASE_URL"]
const cleanups: Cluster.Cleanups = []

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

const sdk = (server: ServerProcess, jwt?: string) =>
  new PinataSDK({
    ...(jwt === undefined ? {} : { pinataJwt: jwt }),
    pinataGateway: new URL(server.url).host,
    endpointUrl: `${server.url}/v3`,
    uploadUrl: `${server.url}/v3`
  })

/** The same signed URL, sent to another node. */
const on = (server: ServerProcess, url: string) => {
  const { pathname, search } = new URL(url)
  return `${server.url}${pathname}${search}`
}

describe.runIf(databaseUrl !== undefined)("signed URLs on two nodes", () => {
  it("a link signed on one node opens on the other; a presigned upload is taken once across both", { timeout: 300_000 }, async () => {
    const { a, b } = await Cluster.startTwoNodes(databaseUrl!, cleanups)
    const user = newApiUser({ url: a.server.url, dataDir: a.dataDir }, { workspace: "Signed", scopes: "org:files:read,org:files:write" })
    const onA = sdk(a.server, user.token)
    const onB = sdk(b.server, user.token)

    const text = `private on two nodes ${crypto.randomUUID()}`
    const file = await onA.upload.private.file(new File([text], "shared.txt", { type: "text/plain" }))
    // Node B stores its own copy of the blocks (the embedded store is per node).
    assert.strictEqual((await onB.upload.private.file(new File([text], "shared.txt", { type: "text/plain" }))).cid, file.cid)

    const signedOnA = await onA.gateways.private.createAccessLink({ cid: file.cid, expires: 120 })
    const openedOnB = await fetch(on(b.server, signedOnA))
    assert.strictEqual(openedOnB.status, 200)
    assert.strictEqual(await openedOnB.text(), text)
    const signedOnB = await onB.gateways.private.createAccessLink({ cid: file.cid, expires: 120 })
    assert.strictEqual(await (await fetch(on(a.server, signedOnB))).text(), text)
    const altered = new URL(on(b.server, signedOnA))
    altered.searchParams.set("X-Expires", "31536000")
    const refused = await fetch(altered)
    assert.strictEqual(refused.status, 403)
    assert.strictEqual(((await refused.json()) as { reason: string }).reason, "bad-signature")
    // Without the link, node B serves nothing private.
    assert.strictEqual((await fetch(`${b.server.url}/files/${file.cid}`)).status, 404)

    // Signed on A, used on B, then refused on A.
    const url = await onA.upload.private.createSignedURL({ expires: 120, name: "across.txt" })
    const keyless = sdk(b.server)
    const uploaded = await keyless.upload.private.file(new File(["across nodes"], "picked.txt")).url(on(b.server, url))
    assert.strictEqual(uploaded.name, "across.txt")
    const again = await fetch(url, { method: "POST", body: formOf(new File(["again"], "again.txt")) })
    assert.strictEqual(again.status, 403)
    assert.strictEqual(((await again.json()) as { reason: string }).reason, "used")

    // Two uploads through one URL, to the two nodes at once: one is recorded.
    for (let round = 0; round < 3; round++) {
      const raced = await onA.upload.private.createSignedURL({ expires: 120, name: `raced-${round}.txt` })
      const answers = await Promise.all([a.server, b.server].map((server, i) =>
        fetch(on(server, raced), { method: "POST", body: formOf(new File([`racer ${round} ${i}`], "r.txt")) })))
      assert.deepStrictEqual(answers.map((r) => r.status).sort(), [200, 403], `round ${round}`)
      const listed = await onA.files.private.list().name(`raced-${round}.txt`)
      assert.strictEqual(listed.files.length, 1)
    }
  })
})

const formOf = (file: File) => {
  const body = new FormData()
  body.append("file", file, file.name)
  return body
}
