/**
 * Audit webhooks on two Cairn nodes sharing one Postgres (decision 0050): both run the delivery worker, and each
 * webhook's cursor row is a lease, so one node at a time delivers to it. Events recorded through either node reach the
 * receiver once each, in log order, each signature checked; without the lease both nodes would deliver everything.
 * Runs in the Postgres pass only.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { createHmac } from "node:crypto"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Cluster from "../src/testing/Cluster.ts"
import { newApiUser, waitUntil } from "../src/testing/index.ts"

const databaseUrl = process.env["DATABASE_URL"]
const cleanups: Cluster.Cleanups = []

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

describe.runIf(databaseUrl !== undefined)("audit webhooks on two nodes", () => {
  it("are delivered by one node at a time: every event once, in order", { timeout: 180_000 }, async () => {
    let key = ""
    const delivered: Array<{ id: string; type: string; name?: string }> = []
    let badSignatures = 0
    const receiver = Http.createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        const body = Buffer.concat(chunks)
        if (request.headers["x-cairn-signature"] !== `sha256=${createHmac("sha256", key).update(body).digest("hex")}`) badSignatures++
        const parsed = JSON.parse(body.toString("utf8"))
        delivered.push({ id: parsed.id, type: parsed.type, name: parsed.data?.name })
        response.writeHead(200).end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
    cleanups.push(() => receiver.close())
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`

    const masterKey = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))))
    const shared = Cluster.clusterEnv(databaseUrl!, cleanups, { SECRETS_MASTER_KEY: masterKey })
    const a = await Cluster.startNode("a", shared, cleanups)
    const b = await Cluster.joinNode(a, "b", shared, cleanups)
    const servers = [a.server, b.server]
    const output = () => servers.map((s) => s.output().slice(-4_000)).join("\n----\n")
    const onA = newApiUser({ url: a.server.url, dataDir: a.dataDir }, { workspace: "Watched", scopes: "org:agents" })
    const call = async (base: string, method: string, path: string, body?: unknown) => {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${onA.token}` },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      return { status: response.status, body: await response.json() }
    }

    const registered = await call(a.server.url, "POST", "/v0/audit/webhooks", { url })
    assert.strictEqual(registered.status, 201, JSON.stringify(registered.body))
    key = registered.body.secret
    // Both nodes' workers have seen the registration (they look every second) before anything is recorded.
    await new Promise((resolve) => setTimeout(resolve, 2_500))
    for (let i = 0; i < 6; i++) {
      const node = i % 2 === 0 ? a : b
      const created = await call(node.server.url, "POST", "/v0/secrets", { name: `FROM_${i}`, value: `value-${i}` })
      assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    }
    await waitUntil("FROM_5 is delivered", () => (delivered.some((d) => d.name === "FROM_5") ? true : undefined), { output, timeoutMs: 60_000 })
    // A while longer, for a second node's copies to arrive if it were delivering too.
    await new Promise((resolve) => setTimeout(resolve, 2_000))

    const ids = delivered.map((d) => d.id)
    assert.strictEqual(new Set(ids).size, ids.length, `delivered twice: ${JSON.stringify(delivered)}`)
    assert.deepStrictEqual(delivered.filter((d) => d.type === "SecretCreated").map((d) => d.name), [0, 1, 2, 3, 4, 5].map((i) => `FROM_${i}`))
    const order = (id: string) => id.split(":").map(BigInt) as [bigint, bigint]
    for (let i = 1; i < ids.length; i++) {
      const [t0, p0] = order(ids[i - 1]!)
      const [t1, p1] = order(ids[i]!)
      assert.isTrue(t0 < t1 || (t0 === t1 && p0 < p1), `out of order: ${ids[i - 1]} then ${ids[i]}`)
    }
    assert.strictEqual(badSignatures, 0)
  })
})
