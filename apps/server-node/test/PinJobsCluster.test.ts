/**
 * Pin jobs on two Cairn nodes sharing one Postgres (decision 0028): a job is worked on by the node it was queued on
 * only. Node B, started while node A retrieves a job, leaves it alone (it used to resume every open job in the
 * database, A's too); when A is killed with SIGKILL, B takes the job over once A's lease expires and pins it. Each
 * node's PIN_SOURCES is its own path on one stand-in gateway, so the gateway sees which node asks: A's requests are
 * held (A is still retrieving when it dies), B's are answered. Runs in the Postgres pass only.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { CID } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"
import { sha256 } from "multiformats/hashes/sha2"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Cluster from "../src/testing/Cluster.ts"
import { newApiUser, type ServerProcess, waitUntil } from "../src/testing/index.ts"

const databaseUrl = process.env["DATABASE_URL"]
const cleanups: Cluster.Cleanups = []

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

const waitFor = <A>(what: string, servers: ReadonlyArray<ServerProcess>, check: () => Promise<A | undefined>, timeoutMs = 60_000) =>
  waitUntil(what, check, { output: () => servers.map((s) => s.output().slice(-4_000)).join("\n----\n"), timeoutMs })

describe.runIf(databaseUrl !== undefined)("pin jobs on two nodes", () => {
  it("are worked on by their own node, and taken over by another when it dies", { timeout: 180_000 }, async () => {
    const bytes = new TextEncoder().encode(`pinned by whichever node is alive ${Date.now()}`)
    const cid = CID.create(1, raw.code, await sha256.digest(bytes)).toString()

    // The stand-in gateway: a raw block for the CID (no CAR); A's requests never answered, B's answered at once.
    const asked: Array<string> = []
    const source = Http.createServer((request, response) => {
      const url = new URL(request.url!, "http://source")
      asked.push(`${url.pathname}?${url.searchParams.get("format")}`)
      if (url.pathname.startsWith("/a/")) return
      if (url.pathname === `/b/ipfs/${cid}` && url.searchParams.get("format") === "raw") {
        response.writeHead(200, { "content-type": "application/vnd.ipld.raw" }).end(bytes)
      } else {
        response.writeHead(404).end()
      }
    })
    await new Promise<void>((resolve) => source.listen(0, "127.0.0.1", resolve))
    cleanups.push(() => source.closeAllConnections())
    cleanups.push(() => source.close())
    const sourceUrl = `http://127.0.0.1:${(source.address() as AddressInfo).port}`
    /** What a node asked the gateway for the CID, in order: its CAR, then its block. */
    const askedBy = (node: "a" | "b") => asked.filter((path) => path.startsWith(`/${node}/ipfs/${cid}?`)).map((path) => path.split("?")[1])

    const shared = Cluster.clusterEnv(databaseUrl!, cleanups, { PIN_TIMEOUT: "5 minutes" })
    const a = await Cluster.startNode("a", { ...shared, PIN_SOURCES: `${sourceUrl}/a` }, cleanups)
    const user = newApiUser({ url: a.server.url, dataDir: a.dataDir }, { workspace: "Pins", scopes: "org:files:read,org:files:write" })
    const queued = await user.call("POST", "/v3/files/public/pin_by_cid", { cid, name: "survivor" })
    assert.strictEqual(queued.status, 200, JSON.stringify(queued.body))
    const jobId = queued.body.data.id as string
    await waitFor("A asking the source", [a.server], async () => askedBy("a").length > 0 ? true : undefined)

    // B starts while A retrieves: A's job is not B's to resume.
    const b = await Cluster.joinNode(a, "b", { ...shared, PIN_SOURCES: `${sourceUrl}/b` }, cleanups)
    const jobOn = async (server: ServerProcess) => {
      const listed = await fetch(`${server.url}/v3/files/public/pin_by_cid`, { headers: { authorization: `Bearer ${user.token}` } })
      const body = await listed.json() as { data: { jobs: Array<{ id: string; status: string }> } }
      return body.data.jobs.find((job) => job.id === jobId)
    }
    await new Promise((resolve) => setTimeout(resolve, 3_000))
    assert.deepStrictEqual(askedBy("b"), [], `B asked for A's job: ${asked.join(", ")}`)
    assert.strictEqual((await jobOn(b.server))?.status, "retrieving")

    // A dies mid-retrieval: once its lease expires, B takes the job over and pins it.
    a.server.child.kill("SIGKILL")
    await a.server.exited
    const pinned = await waitFor("the job pinned by B", [a.server, b.server], async () => {
      const job = await jobOn(b.server)
      return job?.status === "pinned" ? job : undefined
    })
    assert.strictEqual(pinned.id, jobId)
    assert.deepStrictEqual(askedBy("b"), ["car", "raw"])
    assert.match(b.server.output(), new RegExp(`Pin job ${jobId} \\(${cid}\\): taken over from node ${a.node}, whose lease expired`))
    const served = await fetch(`${b.server.url}/ipfs/${cid}`)
    assert.strictEqual(served.status, 200)
    assert.deepStrictEqual(new Uint8Array(await served.arrayBuffer()), bytes)
    const listed = await fetch(`${b.server.url}/v3/files/public?cid=${cid}`, { headers: { authorization: `Bearer ${user.token}` } })
    assert.deepStrictEqual(((await listed.json()) as { data: { files: Array<{ name: string }> } }).data.files.map((file) => file.name), ["survivor"])
  })
})
