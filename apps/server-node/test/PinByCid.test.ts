/**
 * Pin by CID between two Cairn servers on loopback: A holds content uploaded with the official pinata SDK; B, whose
 * `PIN_SOURCES` is a stand-in gateway in front of A, pins it by CID through the SDK (`upload.public.cid`, `queue()`,
 * `deletePinRequest`). The stand-in passes A's answers through, or for chosen CIDs sends bytes that lie, or holds
 * the request until told to go on (to cancel a job, or stop B while it retrieves). The Pinning Service API on B is
 * called with the requests Kubo's `ipfs pin remote` sends, and every answer is checked against the spec's OpenAPI
 * schemas (docs/reference/ipfs-pinning-service.yaml) with ajv; and through the client generated from the spec
 * (`@ipfs-shipyard/pinning-service-client`, the spec's published JavaScript client).
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Configuration, RemotePinningServiceClient, Status, TextMatchingStrategy } from "@ipfs-shipyard/pinning-service-client"
import { CarWriter } from "@ipld/car"
import { Ajv } from "ajv"
import { CID } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"
import { sha256 } from "multiformats/hashes/sha2"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PinataSDK } from "pinata"
import { parse } from "yaml"
import { cli, freePort, type ServerProcess, startServer, waitUntilServing } from "../src/testing/index.ts"

// The spec's descriptions are long double-quoted scalars that the yaml package refuses; its schemas are read alone.
const specText = readFileSync(new URL("../../../docs/reference/ipfs-pinning-service.yaml", import.meta.url), "utf8")
const schemasStart = specText.indexOf("\ncomponents:")
const spec = parse(specText.slice(schemasStart, specText.indexOf("\n  parameters:", schemasStart))) as {
  components: { schemas: Record<string, unknown> }
}
// Formats are checked by hand below (the spec's only one is date-time).
const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false })
// OpenAPI's components as one JSON Schema document, so `#/components/schemas/…` references resolve.
ajv.addSchema({ $id: "psa", components: spec.components })
const validate = (name: string, body: unknown) => {
  const check = ajv.getSchema(`psa#/components/schemas/${name}`)!
  assert.isTrue(check(body), `${name}: ${JSON.stringify(check.errors)} in ${JSON.stringify(body)}`)
  const statuses = name === "PinStatus" ? [body as { created: string }] : name === "PinResults" ? (body as { results: Array<{ created: string }> }).results : []
  for (const status of statuses) assert.match(status.created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/)
}

const picked = (files: Record<string, string>) =>
  Object.entries(files).map(([path, content]) => {
    const file = new File([content], path.split("/").at(-1)!)
    Object.defineProperty(file, "webkitRelativePath", { value: path })
    return file
  })

/** A CAR naming `root` whose one block is other bytes than the CID's. */
const lyingCar = async (root: string) => {
  const { writer, out } = CarWriter.create([CID.parse(root)])
  const chunks: Array<Uint8Array> = []
  const reading = (async () => {
    for await (const chunk of out) chunks.push(chunk)
  })()
  await writer.put({ cid: CID.parse(root), bytes: new TextEncoder().encode("forged") })
  await writer.close()
  await reading
  return Buffer.concat(chunks)
}

const rawCidOf = async (bytes: Uint8Array) => CID.create(1, raw.code, await sha256.digest(bytes)).toString()

const until = async <A>(what: string, probe: () => Promise<A | undefined>, timeoutMs = 30_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

// B's store: embedded, and Kubo too when KUBO_API_URL names a node (A stays embedded: the blocks must cross).
const stores = [
  { name: "the embedded store", env: {} },
  ...(process.env["KUBO_API_URL"] === undefined ? [] : [{ name: "Kubo", env: { KUBO_API_URL: process.env["KUBO_API_URL"] } }])
]

describe.each(stores)("pin by CID from another Cairn, onto $name", ({ env: storeEnv }) => {
  const dirs = { a: mkdtempSync(join(tmpdir(), "cairn-pin-a-")), b: mkdtempSync(join(tmpdir(), "cairn-pin-b-")) }
  let a: ServerProcess
  let b: ServerProcess
  let bEnv: Record<string, string>
  let source: http.Server
  let sourceUrl: string
  let onA: PinataSDK
  let onB: PinataSDK
  let bJwt: string
  const lying = new Set<string>()
  const lyingInCar = new Set<string>()
  const held = new Map<string, Array<() => void>>()
  const holding = new Set<string>()
  const asked: Array<string> = []
  let fileCid: string
  let folderCid: string
  const fileBytes = new TextEncoder().encode("pinned across two nodes\n".repeat(20_000))

  const startB = async () => {
    b = await startServer(bEnv)
    await waitUntilServing(b)
  }
  const sdk = (url: string, jwt: string) =>
    new PinataSDK({ pinataJwt: jwt, pinataGateway: "127.0.0.1", endpointUrl: `${url}/v3`, uploadUrl: `${url}/v3`, legacyUploadUrl: `${url}/pinning/pinFileToIPFS` })
  const jobOf = async (id: string) => (await onB.files.public.queue().status(undefined as never)).jobs.find((job) => job.id === id)
  const bCall = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${b.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${bJwt}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
  }

  beforeAll(async () => {
    a = await startServer({ DATA_DIR: dirs.a, KUBO_API_URL: undefined })
    await waitUntilServing(a)
    const aWorkspace = cli({ url: a.url, dataDir: dirs.a }, "workspace", "create", "--name", "Origin")
    onA = sdk(a.url, cli({ url: a.url, dataDir: dirs.a }, "key", "create", "--workspace", aWorkspace, "--user", "ada", "--scopes", "org:files:read,org:files:write"))
    fileCid = (await onA.upload.public.file(new File([fileBytes], "notes.txt"))).cid
    folderCid = (await onA.upload.public.fileArray(picked({ "site/index.html": "<h1>hi</h1>\n", "site/a/b.txt": "deep\n", "site/c.txt": "see\n" })).name("site")).cid

    // The stand-in gateway: A's answers, unless the CID is to lie or to be held.
    source = http.createServer((request, response) => {
      const url = new URL(request.url!, "http://source")
      const cid = url.pathname.split("/")[2] ?? ""
      asked.push(`${cid}?${url.searchParams.get("format")}`)
      if (lyingInCar.has(cid) && url.searchParams.get("format") === "car") {
        void lyingCar(cid).then((car) => response.writeHead(200, { "content-type": "application/vnd.ipld.car" }).end(car))
        return
      }
      if (lying.has(cid)) {
        if (url.searchParams.get("format") === "car") {
          response.writeHead(404).end()
        } else {
          response.writeHead(200, { "content-type": "application/vnd.ipld.raw" }).end("these are not the bytes you are looking for")
        }
        return
      }
      const pass = () =>
        fetch(`${a.url}${request.url}`, { headers: { accept: String(request.headers.accept ?? "") } }).then(async (answer) => {
          response.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/octet-stream" })
          response.end(Buffer.from(await answer.arrayBuffer()))
        }, () => response.writeHead(502).end())
      if (holding.has(cid)) held.set(cid, [...held.get(cid) ?? [], pass])
      else void pass()
    })
    await new Promise<void>((resolve) => source.listen(0, "127.0.0.1", resolve))
    sourceUrl = `http://127.0.0.1:${(source.address() as AddressInfo).port}`

    // B keeps its port across the restart, so the SDK pointed at it reaches it again.
    bEnv = { ...storeEnv, DATA_DIR: dirs.b, PORT: String(await freePort()), PIN_SOURCES: sourceUrl, PIN_TIMEOUT: "20 seconds" }
    await startB()
    const bWorkspace = cli({ url: b.url, dataDir: dirs.b }, "workspace", "create", "--name", "Pinner")
    bJwt = cli({ url: b.url, dataDir: dirs.b }, "key", "create", "--workspace", bWorkspace, "--user", "bo", "--scopes", "org:files:read,org:files:write")
    onB = sdk(b.url, bJwt)
  }, 180_000)

  afterAll(async () => {
    for (const server of [b, a]) {
      if (server !== undefined && server.child.exitCode === null) {
        server.child.kill("SIGTERM")
        await server.exited
      }
    }
    source?.close()
    rmSync(dirs.a, { recursive: true, force: true })
    rmSync(dirs.b, { recursive: true, force: true })
  })

  it("pins a file by CID through the SDK: the job goes to pinned, the file is listed on B and B's gateway serves its bytes", async () => {
    const queued = await onB.upload.public.cid(fileCid).name("notes from A").keyvalues({ from: "a" })
    assert.strictEqual(queued.cid, fileCid)
    assert.strictEqual(queued.name, "notes from A")
    assert.oneOf(queued.status, ["prechecking", "retrieving", "pinned"])
    const pinned = await until("the job pinned", async () => {
      const job = await jobOf(queued.id)
      return job?.status === "pinned" ? job : undefined
    })
    assert.strictEqual(pinned.cid, fileCid)
    const listed = await onB.files.public.list().cid(fileCid)
    assert.strictEqual(listed.files.length, 1)
    assert.strictEqual(listed.files[0]!.name, "notes from A")
    assert.strictEqual(listed.files[0]!.size, fileBytes.byteLength)
    assert.deepStrictEqual(listed.files[0]!.keyvalues, { from: "a" })
    const served = await fetch(`${b.url}/ipfs/${fileCid}`)
    assert.strictEqual(served.status, 200)
    assert.deepStrictEqual(new Uint8Array(await served.arrayBuffer()), fileBytes)
  })

  it("pins a folder made with fileArray: recorded as a directory with its files, paths served by B", async () => {
    const queued = await onB.upload.public.cid(folderCid)
    await until("the folder pinned", async () => (await jobOf(queued.id))?.status === "pinned" ? true : undefined)
    const [file] = (await onB.files.public.list().cid(folderCid)).files
    assert.strictEqual(file!.mime_type, "directory")
    assert.strictEqual(file!.number_of_files, 3)
    const deep = await fetch(`${b.url}/ipfs/${folderCid}/a/b.txt`)
    assert.strictEqual(deep.status, 200)
    assert.strictEqual(await deep.text(), "deep\n")
  })

  it("fails a job whose source's blocks lie, says why, and stores nothing", async () => {
    const cid = await rawCidOf(new TextEncoder().encode("the real bytes"))
    lying.add(cid)
    const queued = await onB.upload.public.cid(cid)
    const failed = await until("the job failed", async () => {
      const job = await jobOf(queued.id)
      return job?.status === "failed" ? job : undefined
    })
    assert.match((failed as unknown as { reason: string }).reason, /does not match its hash/)
    assert.strictEqual((await fetch(`${b.url}/ipfs/${cid}?format=raw`)).status, 404)
    assert.strictEqual((await onB.files.public.list().cid(cid)).files.length, 0)
  })

  it("fails a job whose source's CAR carries a forged block, and stores nothing", async () => {
    const cid = await rawCidOf(new TextEncoder().encode(`genuine ${Date.now()}`))
    lyingInCar.add(cid)
    const queued = await onB.upload.public.cid(cid)
    const failed = await until("the job failed", async () => {
      const job = await jobOf(queued.id)
      return job?.status === "failed" ? job : undefined
    })
    assert.strictEqual((failed as unknown as { reason: string }).reason, `block ${cid} does not match its hash: the source sent other bytes`)
    assert.strictEqual((await fetch(`${b.url}/ipfs/${cid}?format=raw`)).status, 404)
    assert.strictEqual((await onB.files.public.list().cid(cid)).files.length, 0)
  })

  it("fails a job for a CID no source has, within its bounded time", async () => {
    const cid = await rawCidOf(new TextEncoder().encode(`nobody has this ${Date.now()}`))
    const started = Date.now()
    const queued = await onB.upload.public.cid(cid)
    const failed = await until("the job failed", async () => {
      const job = await jobOf(queued.id)
      return job?.status === "failed" ? job : undefined
    })
    assert.isBelow(Date.now() - started, 25_000)
    // On Kubo its own node is a source too, which looks on the network until PIN_TIMEOUT.
    assert.match((failed as unknown as { reason: string }).reason, storeEnv.KUBO_API_URL === undefined ? /not found: no pin source has it/ : /not found|timed out after 20 s/)
  })

  it("cancels a job still retrieving with deletePinRequest: it stays cancelled, no file is recorded", async () => {
    const bytes = new TextEncoder().encode(`cancel me ${Date.now()}`)
    const cid = (await onA.upload.public.file(new File([bytes], "cancel.txt"))).cid
    holding.add(cid)
    const queued = await onB.upload.public.cid(cid)
    await until("the job retrieving", async () => (await jobOf(queued.id))?.status === "retrieving" ? true : undefined)
    assert.strictEqual(await onB.files.public.deletePinRequest(queued.id), "OK")
    for (const go of held.get(cid) ?? []) go()
    holding.delete(cid)
    await new Promise((resolve) => setTimeout(resolve, 1000))
    assert.strictEqual((await jobOf(queued.id))!.status, "cancelled")
    assert.strictEqual((await onB.files.public.list().cid(cid)).files.length, 0)
    const again = await bCall("DELETE", `/v3/files/public/pin_by_cid/${queued.id}`)
    assert.deepStrictEqual(again, { status: 409, body: { error: "Pin job is already cancelled" } })
  })

  it("resumes a job that was retrieving when B stopped, and pins it after the restart", async () => {
    const bytes = new TextEncoder().encode(`survives a restart ${Date.now()}`)
    const cid = (await onA.upload.public.file(new File([bytes], "restart.txt"))).cid
    holding.add(cid)
    const queued = await onB.upload.public.cid(cid)
    await until("the job retrieving", async () => (await jobOf(queued.id))?.status === "retrieving" ? true : undefined)
    b.child.kill("SIGTERM")
    await b.exited
    const before = b.output()
    held.delete(cid)
    holding.delete(cid)
    await startB()
    await until("the resumed job pinned", async () => (await jobOf(queued.id))?.status === "pinned" ? true : undefined).catch(async (error) => {
      throw new Error(`${error.message}: ${JSON.stringify(await jobOf(queued.id))}\nB before the stop:\n${before}\nB after:\n${b.output()}`)
    })
    const served = await fetch(`${b.url}/ipfs/${cid}`)
    assert.strictEqual(await served.text(), new TextDecoder().decode(bytes))
  }, 120_000)

  it("lists jobs through the SDK's queue(): filtered by status and CID, newest first, page by page", async () => {
    const all = (await onB.files.public.queue().pageLimit(1000)).jobs
    assert.isAtLeast(all.length, 6)
    const paged: Array<string> = []
    for await (const job of onB.files.public.queue().pageLimit(2)) paged.push(job.id)
    assert.deepStrictEqual(paged, all.map((job) => job.id))
    const oldestFirst = (await onB.files.public.queue().sort("ASC").pageLimit(1000)).jobs
    assert.deepStrictEqual(oldestFirst.map((job) => job.id), [...paged].reverse())
    const failed = (await onB.files.public.queue().status("failed" as never).pageLimit(1000)).jobs
    assert.isAtLeast(failed.length, 3)
    assert.isTrue(failed.every((job) => job.status === "failed"))
    const ofFile = (await onB.files.public.queue().cid(fileCid)).jobs
    assert.isTrue(ofFile.length >= 1 && ofFile.every((job) => job.cid === fileCid))
  })

  it("refuses bad input with 4xx and a clear message", async () => {
    assert.deepStrictEqual(await bCall("POST", "/v3/files/public/pin_by_cid", { cid: "not-a-cid" }), {
      status: 400,
      body: { error: "Validation failed: \"not-a-cid\" is not a valid CID\n  at [\"cid\"]".replace(/\s+/g, " ").trim() }
    })
    const badNetwork = await bCall("POST", "/v3/files/elsewhere/pin_by_cid", { cid: fileCid })
    assert.strictEqual(badNetwork.status, 400)
    assert.match(badNetwork.body.error, /^Validation failed: /)
    assert.deepStrictEqual(await bCall("DELETE", "/v3/files/public/pin_by_cid/nope"), { status: 404, body: { error: "Pin job not found" } })
    const badStatus = await bCall("GET", "/v3/files/public/pin_by_cid?status=lost")
    assert.strictEqual(badStatus.status, 400)
    assert.match(badStatus.body.error, /^Validation failed: status must be one of/)
    assert.strictEqual((await fetch(`${b.url}/v3/files/public/pin_by_cid`, { method: "POST", body: "{}" })).status, 401)
  })

  describe("the IPFS Pinning Service API, as Kubo's pin remote calls it", () => {
    it("adds, gets, lists with filters, replaces and removes pins; every answer matches the spec", async () => {
      // `ipfs pin remote add --service=cairn --name=notes <cid>`: POST /pins {cid, name, origins}.
      const added = await bCall("POST", "/pins", { cid: fileCid, name: "notes", origins: [], meta: { app: "kubo" } })
      assert.strictEqual(added.status, 202)
      validate("PinStatus", added.body)
      assert.oneOf(added.body.status, ["queued", "pinning", "pinned"])
      const id = added.body.requestid as string
      // Kubo polls GET /pins/{requestid} until pinned (`--background=false`).
      const pinned = await until("the pin pinned", async () => {
        const got = await bCall("GET", `/pins/${id}`)
        return got.body.status === "pinned" ? got : undefined
      })
      assert.strictEqual(pinned.status, 200)
      validate("PinStatus", pinned.body)
      assert.deepStrictEqual(pinned.body.pin, { cid: fileCid, name: "notes", meta: { app: "kubo" } })
      // `ipfs pin remote ls --service=cairn --cid=<cid> --status=queued,pinning,pinned,failed`.
      const listed = await bCall("GET", `/pins?cid=${fileCid}&status=queued,pinning,pinned,failed&limit=10`)
      assert.strictEqual(listed.status, 200)
      validate("PinResults", listed.body)
      assert.deepStrictEqual(listed.body.results.map((pin: { requestid: string }) => pin.requestid), [id])
      for (const query of ["name=NOT&match=ipartial", `meta=${encodeURIComponent(JSON.stringify({ app: "kubo" }))}`, `after=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`]) {
        const found = await bCall("GET", `/pins?${query}`)
        validate("PinResults", found.body)
        assert.strictEqual(found.body.count, 1, query)
      }
      for (const query of ["name=NOT", `before=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`, "status=failed"]) {
        const none = await bCall("GET", `/pins?${query}`)
        validate("PinResults", none.body)
        assert.strictEqual(none.body.count, 0, query)
      }
      // Replace: a new pin of the folder; the old one is gone.
      const replaced = await bCall("POST", `/pins/${id}`, { cid: folderCid, name: "site" })
      assert.strictEqual(replaced.status, 202)
      validate("PinStatus", replaced.body)
      assert.notStrictEqual(replaced.body.requestid, id)
      const old = await bCall("GET", `/pins/${id}`)
      assert.strictEqual(old.status, 404)
      validate("Failure", old.body)
      assert.deepStrictEqual(old.body, { error: { reason: "NOT_FOUND", details: "Pin job not found" } })
      // `ipfs pin remote rm --service=cairn --cid=<cid>`: lists, then DELETE /pins/{requestid}.
      const removed = await fetch(`${b.url}/pins/${replaced.body.requestid}`, { method: "DELETE", headers: { authorization: `Bearer ${bJwt}` } })
      assert.strictEqual(removed.status, 202)
      assert.strictEqual((await bCall("GET", `/pins/${replaced.body.requestid}`)).status, 404)
    }, 60_000)

    it("pages as Kubo's client does: newest first, the next page asked `before` the oldest `created` seen, until count is reached", async () => {
      const made: Array<string> = []
      for (const name of ["one", "two", "three"]) {
        const added = await bCall("POST", "/pins", { cid: fileCid, name: `page-${name}`, origins: ["/ip4/127.0.0.1/tcp/4001/p2p/QmSourcePeerId"] })
        assert.strictEqual(added.status, 202)
        made.push(added.body.requestid)
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
      await until("the pins pinned", async () => {
        const listed = await bCall("GET", "/pins?name=page-&match=partial&status=pinned")
        return listed.body.count === 3 ? true : undefined
      })
      const seen: Array<string> = []
      let before: string | undefined
      for (;;) {
        const page = await bCall("GET", `/pins?name=page-&match=partial&status=queued,pinning,pinned,failed&limit=2${before === undefined ? "" : `&before=${encodeURIComponent(before)}`}`)
        assert.strictEqual(page.status, 200)
        validate("PinResults", page.body)
        seen.push(...page.body.results.map((pin: { requestid: string }) => pin.requestid))
        if (page.body.count === page.body.results.length) break
        before = page.body.results.at(-1).created
      }
      assert.deepStrictEqual(seen, [...made].reverse())
    }, 60_000)

    it("works with the client generated from the spec (@ipfs-shipyard/pinning-service-client): add, get, list with every filter, replace, remove", async () => {
      const client = new RemotePinningServiceClient(new Configuration({ endpointUrl: b.url, accessToken: bJwt }))
      const added = await client.pinsPost({ pin: { cid: fileCid, name: "generated-client", origins: [], meta: { via: "generated" } } })
      assert.oneOf(added.status, [Status.Queued, Status.Pinning, Status.Pinned])
      assert.instanceOf(added.created, Date)
      assert.isAbove(added.delegates.length, 0)
      const pinned = await until("the pin pinned", async () => {
        const got = await client.pinsRequestidGet({ requestid: added.requestid })
        return got.status === Status.Pinned ? got : undefined
      })
      assert.deepStrictEqual({ cid: pinned.pin.cid, name: pinned.pin.name, meta: pinned.pin.meta }, { cid: fileCid, name: "generated-client", meta: { via: "generated" } })
      const every = [Status.Queued, Status.Pinning, Status.Pinned, Status.Failed]
      const ids = async (request: Parameters<typeof client.pinsGet>[0]) => (await client.pinsGet(request)).results.map((pin) => pin.requestid)
      // Each filter as the client writes it: cid and status as comma lists, before/after as ISO times, meta as meta[key]=value.
      assert.deepStrictEqual(await ids({ cid: [fileCid], name: "generated-client", status: every }), [added.requestid])
      assert.deepStrictEqual(await ids({ name: "GENERATED", match: TextMatchingStrategy.Ipartial, status: every }), [added.requestid])
      assert.deepStrictEqual(await ids({ meta: { via: "generated" }, status: every }), [added.requestid])
      assert.deepStrictEqual(await ids({ meta: { via: "elsewhere" }, status: every }), [])
      assert.include(await ids({ after: new Date(Date.now() - 3_600_000), status: [Status.Pinned], limit: 1000 }), added.requestid)
      assert.deepStrictEqual(await ids({ name: "generated-client", before: new Date(Date.now() - 3_600_000) }), [])
      const replaced = await client.pinsRequestidPost({ requestid: added.requestid, pin: { cid: folderCid, name: "generated-replacement" } })
      assert.notStrictEqual(replaced.requestid, added.requestid)
      // The generated client throws the Response of a failure.
      const gone = await client.pinsRequestidGet({ requestid: added.requestid }).then(() => undefined, (response: Response) => response)
      assert.strictEqual(gone?.status, 404)
      assert.deepStrictEqual(await gone!.json(), { error: { reason: "NOT_FOUND", details: "Pin job not found" } })
      await client.pinsRequestidDelete({ requestid: replaced.requestid })
      assert.deepStrictEqual(await ids({ name: "generated-", match: TextMatchingStrategy.Partial, status: every }), [])
    }, 60_000)

    it("is at /psa/pins too, where Pinata serves it", async () => {
      const added = await bCall("POST", "/psa/pins", { cid: fileCid, name: "via-psa" })
      assert.strictEqual(added.status, 202)
      validate("PinStatus", added.body)
      const got = await bCall("GET", `/psa/pins/${added.body.requestid}`)
      validate("PinStatus", got.body)
      const listed = await bCall("GET", "/psa/pins?name=via-psa&status=queued,pinning,pinned,failed")
      validate("PinResults", listed.body)
      assert.deepStrictEqual(listed.body.results.map((pin: { requestid: string }) => pin.requestid), [added.body.requestid])
      assert.strictEqual((await fetch(`${b.url}/psa/pins/${added.body.requestid}`, { method: "DELETE", headers: { authorization: `Bearer ${bJwt}` } })).status, 202)
    })

    it("answers bad input and bad keys in the spec's Failure shape", async () => {
      const badCid = await bCall("POST", "/pins", { cid: "nope" })
      assert.strictEqual(badCid.status, 400)
      validate("Failure", badCid.body)
      assert.strictEqual(badCid.body.error.reason, "BAD_REQUEST")
      const badStatus = await bCall("GET", "/pins?status=lost")
      assert.strictEqual(badStatus.status, 400)
      validate("Failure", badStatus.body)
      const badLimit = await bCall("GET", "/pins?limit=0")
      assert.strictEqual(badLimit.status, 400)
      const noKey = await fetch(`${b.url}/pins`)
      assert.strictEqual(noKey.status, 401)
      const body = await noKey.json()
      validate("Failure", body)
      assert.strictEqual(body.error.reason, "UNAUTHORIZED")
    })
  })
})
