/**
 * Signed URLs as a user of the official pinata SDK meets them, against a real server on loopback (its embedded
 * stores, or a Postgres database under DATABASE_URL): private access links (`gateways.private.createAccessLink`,
 * `gateways.private.get`) that open private content on the gateway until they expire, and refuse when altered, made
 * for other content or by a revoked key; private content through an API key of its own workspace only; public content
 * as before. Presigned uploads (`upload.*.createSignedURL`, then `upload.*.file(f).url(signedUrl)` from an SDK with
 * no key): one upload, however many race for it, within the URL's size and mime types, into the signer's workspace
 * with the signed metadata; refused once used, expired or altered.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PinataSDK } from "pinata"
import { type ServerProcess, cli, ioSettled, startServer, stopServer, waitUntilServing } from "../src/testing/index.ts"

const dataDir = mkdtempSync(join(tmpdir(), "cairn-signed-"))
let server: ServerProcess
let env: { url: string; dataDir: string }
let workspaceId: string
let writer: string
let pinata: PinataSDK
/** What a browser holds: no key, only the URLs its server signed. */
let keyless: PinataSDK

/**
 * An SDK pointed at the server. `pinataGateway` is the server's host: the SDK puts `https://` in front of it, and the
 * links Cairn returns are on the origin the API request came to, so they work over plain HTTP too.
 */
const sdk = (jwt: string | undefined) =>
  new PinataSDK({
    ...(jwt === undefined ? {} : { pinataJwt: jwt }),
    pinataGateway: new URL(server.url).host,
    endpointUrl: `${server.url}/v3`,
    uploadUrl: `${server.url}/v3`,
    legacyUploadUrl: `${server.url}/pinning/pinFileToIPFS`
  })
const newKey = (scopes: string, workspace = workspaceId) => cli(env, "key", "create", "--workspace", workspace, "--user", "ada", "--scopes", scopes)
const keyIdOf = (jwt: string) => (JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString()) as { jti: string }).jti
const call = async (path: string, init: RequestInit & { token?: string } = {}) => {
  await ioSettled()
  return fetch(path.startsWith("http") ? path : `${server.url}${path}`, {
    ...init,
    headers: { ...(init.token === undefined ? {} : { authorization: `Bearer ${init.token}` }), ...(init.headers as Record<string, string> ?? {}) }
  })
}
const bodyOf = async (response: Response) => (await response.json()) as { error: string; reason?: string; max_file_size?: number }
const expectRefusal = async (response: Response, status: number, reason: string) => {
  const body = await bodyOf(response)
  assert.strictEqual(response.status, status, JSON.stringify(body))
  assert.strictEqual(body.reason, reason, body.error)
  assert.match(body.error, /^Signed URL refused: /)
}
const seconds = () => Math.floor(Date.now() / 1000)
const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis))
/** The error an SDK call failed with (its message carries the server's body). */
const failure = async (promise: PromiseLike<unknown>) => {
  try {
    await promise
  } catch (error) {
    return error as Error & { statusCode?: number }
  }
  throw new Error("expected the call to fail")
}
const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89])

beforeAll(async () => {
  server = await startServer({ DATA_DIR: dataDir })
  await waitUntilServing(server)
  env = { url: server.url, dataDir }
  workspaceId = cli(env, "workspace", "create", "--name", "Signer")
  writer = newKey("org:files:read,org:files:write")
  pinata = sdk(writer)
  keyless = sdk(undefined)
}, 120_000)

afterAll(() => stopServer(server, dataDir))

describe("private access links", () => {
  it("createAccessLink and gateways.private.get open private content, on /files and /ipfs", async () => {
    const text = `private ${crypto.randomUUID()}`
    const file = await pinata.upload.private.file(new File([text], "secret.txt", { type: "text/plain" }))
    const link = await pinata.gateways.private.createAccessLink({ cid: file.cid, expires: 60 })
    assert.match(link, new RegExp(`^${server.url}/files/${file.cid}\\?X-Algorithm=ES256&X-Date=\\d+&X-Expires=60&X-Method=GET&X-Signature=[\\w.-]+$`))
    const opened = await call(link)
    assert.strictEqual(opened.status, 200)
    assert.strictEqual(await opened.text(), text)
    assert.match(opened.headers.get("content-type")!, /^text\/plain/)
    assert.strictEqual(opened.headers.get("cache-control"), "private")
    assert.strictEqual(opened.headers.get("referrer-policy"), "no-referrer")
    assert.isNull(opened.headers.get("pinata-signature"))

    const got = await pinata.gateways.private.get(file.cid)
    assert.deepStrictEqual(got, { data: text, contentType: "text/plain" })

    // A link asked for with a path-gateway URL works there; so does one asked for with a bare CID.
    const viaIpfs = await call("/v3/files/private/download_link", { method: "POST", token: writer, body: JSON.stringify({ url: `https://gateway.example/ipfs/${file.cid}`, date: seconds(), expires: 60, method: "GET" }) })
    const ipfsLink = ((await viaIpfs.json()) as { data: string }).data
    assert.match(ipfsLink, new RegExp(`^${server.url}/ipfs/${file.cid}\\?`))
    assert.strictEqual(await (await call(ipfsLink)).text(), text)
    const byCid = await call("/v3/files/private/download_link", { method: "POST", token: writer, body: JSON.stringify({ cid: file.cid, expires: 60 }) })
    assert.strictEqual(await (await call(((await byCid.json()) as { data: string }).data)).text(), text)
    // The trustless formats reach the private copy through a link too.
    const raw = await call(`${link}&format=raw`)
    assert.strictEqual(raw.headers.get("content-type"), "application/vnd.ipld.raw")
    assert.strictEqual(await raw.text(), text)
  })

  it("serves private content to its own workspace's API key only, and never without credentials", async () => {
    const file = await pinata.upload.private.file(new File([`keyed ${crypto.randomUUID()}`], "keyed.txt"))
    for (const path of [`/files/${file.cid}`, `/ipfs/${file.cid}`]) {
      const anonymous = await call(path)
      assert.strictEqual(anonymous.status, 404)
      assert.strictEqual((await bodyOf(anonymous)).error, "Content not found")
      assert.strictEqual((await call(path, { token: writer })).status, 200)
    }
    const other = cli(env, "workspace", "create", "--name", "Neighbour")
    const neighbour = newKey("org:files:read,org:files:write", other)
    const refused = await call(`/files/${file.cid}`, { token: neighbour })
    assert.strictEqual(refused.status, 404)
    assert.strictEqual((await bodyOf(refused)).error, "Content not found")
    assert.strictEqual((await call(`/files/${file.cid}`, { token: "not.a.key" })).status, 401)
    // The neighbour cannot make a link to it either: not its file.
    const notTheirs = await failure(sdk(neighbour).gateways.private.createAccessLink({ cid: file.cid, expires: 60 }))
    assert.strictEqual(notTheirs.statusCode, 404)
    assert.include(notTheirs.message, "File not found")
    // gateways.private.get is signed without a check (the SDK ignores that answer), and the gateway then refuses it.
    const viaGet = await failure(sdk(neighbour).gateways.private.get(file.cid))
    assert.strictEqual(viaGet.statusCode, 404)
    assert.include(viaGet.message, "Content not found")
  })

  it("leaves public content as it was", async () => {
    const file = await pinata.upload.public.file(new File([`public ${crypto.randomUUID()}`], "public.txt", { type: "text/plain" }))
    for (const init of [{}, { token: "anything" }, { headers: { authorization: "Basic YTpi" } }]) {
      const served = await call(`/ipfs/${file.cid}`, init)
      assert.strictEqual(served.status, 200)
      assert.strictEqual(served.headers.get("cache-control"), "public, max-age=29030400, immutable")
    }
    // Nor does a link to private content open public content that is not its own.
    const mine = await pinata.upload.private.file(new File([`mine ${crypto.randomUUID()}`], "mine.txt"))
    const link = new URL(await pinata.gateways.private.createAccessLink({ cid: mine.cid, expires: 60 }))
    await expectRefusal(await call(`/ipfs/${file.cid}${link.search}`), 403, "other-content")
  })

  it("refuses a link that was altered, made for another CID, or signed by a revoked key; and one to a deleted file", async () => {
    const [one, two] = await Promise.all([
      pinata.upload.private.file(new File([`one ${crypto.randomUUID()}`], "one.txt")),
      pinata.upload.private.file(new File([`two ${crypto.randomUUID()}`], "two.txt"))
    ])
    const link = new URL(await pinata.gateways.private.createAccessLink({ cid: one.cid, expires: 60 }))
    const altered = (name: string, value: string) => {
      const url = new URL(link)
      url.searchParams.set(name, value)
      return url.toString()
    }
    await expectRefusal(await call(altered("X-Expires", "6000000")), 403, "bad-signature")
    await expectRefusal(await call(altered("X-Date", String(seconds() + 100))), 403, "bad-signature")
    await expectRefusal(await call(altered("X-Method", "POST")), 403, "bad-signature")
    const signature = link.searchParams.get("X-Signature")!
    const [header, payload, sig] = signature.split(".")
    await expectRefusal(await call(altered("X-Signature", `${header}.${payload}.${sig!.startsWith("A") ? "B" : "A"}${sig!.slice(1)}`)), 403, "bad-signature")
    // A payload edited to name the other CID no longer matches its signature.
    const edited = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, "base64url").toString()), trm: { cid: two.cid, method: "GET" } })).toString("base64url")
    await expectRefusal(await call(altered("X-Signature", `${header}.${edited}.${sig}`).replace(one.cid, two.cid)), 403, "bad-signature")
    await expectRefusal(await call(altered("X-Signature", "garbage")), 403, "malformed")
    await expectRefusal(await call(`/files/${one.cid}?X-Signature=`), 403, "malformed")
    await expectRefusal(await call(link.toString().replace(one.cid, two.cid)), 403, "other-content")
    // A presigned upload's signature is not a link.
    const upload = new URL(await pinata.upload.private.createSignedURL({ expires: 60 }))
    await expectRefusal(await call(`/files/${one.cid}${upload.search.replace("X-Method=POST", "X-Method=GET")}`), 403, "bad-signature")
    assert.strictEqual((await call(link.toString())).status, 200)

    const revokable = newKey("org:files:read,org:files:write")
    const revokableLink = await sdk(revokable).gateways.private.createAccessLink({ cid: one.cid, expires: 60 })
    assert.strictEqual((await call(revokableLink)).status, 200)
    cli(env, "key", "revoke", keyIdOf(revokable))
    await expectRefusal(await call(revokableLink), 403, "key-revoked")

    await pinata.files.private.delete([one.id])
    const gone = await call(link.toString())
    assert.strictEqual(gone.status, 404)
    assert.strictEqual((await bodyOf(gone)).error, "Content not found")
  })

  it("stops working when it expires", async () => {
    const file = await pinata.upload.private.file(new File([`brief ${crypto.randomUUID()}`], "brief.txt"))
    const date = seconds()
    const link = await pinata.gateways.private.createAccessLink({ cid: file.cid, expires: 2, date })
    assert.strictEqual((await call(link)).status, 200)
    await sleep(Math.max(0, (date + 2) * 1000 - Date.now()) + 1100)
    await expectRefusal(await call(link), 403, "expired")
  })

  it("refuses bad requests for a link with a clear 4xx", async () => {
    const file = await pinata.upload.private.file(new File([`asked ${crypto.randomUUID()}`], "asked.txt"))
    const ask = (body: unknown, token: string | null = writer) =>
      call("/v3/files/private/download_link", { method: "POST", ...(token === null ? {} : { token }), body: JSON.stringify(body) })
    const expect400 = async (response: Response, detail: RegExp) => {
      const body = await bodyOf(response)
      assert.strictEqual(response.status, 400, body.error)
      assert.match(body.error, /^Validation failed: /)
      assert.match(body.error, detail)
    }
    await expect400(await ask({ cid: file.cid, expires: 0 }), /expires must be/)
    await expect400(await ask({ cid: file.cid, expires: 60, date: seconds() + 3600 }), /date is in the future/)
    await expect400(await ask({ cid: file.cid, expires: 10, date: seconds() - 3600 }), /already past/)
    await expect400(await ask({ url: "https://gateway.example/somewhere", expires: 60 }), /gateway URL of a CID/)
    await expect400(await ask({ url: "https://gateway.example/files/not-a-cid", expires: 60 }), /not a valid CID/)
    await expect400(await ask({ cid: file.cid, expires: 60, method: "PUT" }), /method must be GET/)
    await expect400(await ask({ expires: 60 }), /give the url/)
    await expect400(await ask({ cid: file.cid }), /expires/)
    assert.strictEqual((await ask({ cid: file.cid, expires: 60 }, null)).status, 401)
    const uploader = newKey("org:files:write")
    assert.strictEqual((await ask({ cid: file.cid, expires: 60 }, uploader)).status, 403)
  })
})

describe("presigned uploads", () => {
  it("take one upload without a key, into the signer's workspace with the signed metadata", async () => {
    const grouper = sdk(newKey("org:groups:write"))
    const group = await grouper.groups.public.create({ name: "from browsers" })
    // A group that is not the workspace's is refused when the URL is made.
    assert.strictEqual((await failure(pinata.upload.public.createSignedURL({ expires: 60, groupId: "group-1" }))).statusCode, 404)
    const url = await pinata.upload.public.createSignedURL({ expires: 60, name: "from-browser.txt", keyvalues: { via: "signed" }, groupId: group.id })
    assert.match(url, new RegExp(`^${server.url}/v3/files/signed/[0-9a-f-]{36}\\?X-Algorithm=ES256&X-Date=\\d+&X-Expires=60&X-Method=POST&X-Signature=`))
    const uploaded = await keyless.upload.public.file(new File(["hello from a browser\n"], "picked.txt", { type: "text/plain" })).url(url)
    assert.deepInclude(uploaded, { name: "from-browser.txt", network: "public", group_id: group.id, size: 21, mime_type: "text/plain" })
    // Recorded as the signing key's upload.
    assert.strictEqual((uploaded as unknown as { user_id: string }).user_id, "ada")
    assert.deepStrictEqual(uploaded.keyvalues, { via: "signed" })
    const listed = await pinata.files.public.list().cid(uploaded.cid)
    assert.deepStrictEqual(listed.files.map((f) => f.id), [uploaded.id])
    assert.strictEqual(await (await call(`/ipfs/${uploaded.cid}`)).text(), "hello from a browser\n")

    const again = await failure(keyless.upload.public.file(new File(["second"], "second.txt")).url(url))
    assert.strictEqual(again.statusCode, 403)
    assert.include(again.message, "already been used")
  })

  it("records one upload when several race for one URL", async () => {
    const url = await pinata.upload.private.createSignedURL({ expires: 60 })
    const results = await Promise.allSettled(
      Array.from({ length: 4 }, (_, i) => keyless.upload.private.file(new File([`racer ${i} ${crypto.randomUUID()}`], `racer-${i}.txt`)).url(url))
    )
    const won = results.filter((r) => r.status === "fulfilled")
    assert.strictEqual(won.length, 1, JSON.stringify(results))
    for (const lost of results.filter((r) => r.status === "rejected")) {
      assert.strictEqual((lost.reason as { statusCode?: number }).statusCode, 403)
      assert.include((lost.reason as Error).message, "already been used")
    }
    const racers = await pinata.files.private.list().name("racer-").limit(100)
    assert.deepStrictEqual(racers.files.map((f) => f.id), [(won[0] as PromiseFulfilledResult<{ id: string }>).value.id])
  })

  it("refuses a file over max_file_size with 413, and takes one of exactly the size after", async () => {
    const url = await pinata.upload.private.createSignedURL({ expires: 60, maxFileSize: 10 })
    const tooLarge = await call(url, { method: "POST", body: form(new File(["01234567890"], "eleven.txt")) })
    assert.strictEqual(tooLarge.status, 413)
    assert.deepStrictEqual(await bodyOf(tooLarge), { error: "File too large", max_file_size: 10 })
    const viaSdk = await failure(keyless.upload.private.file(new File(["01234567890"], "eleven.txt")).url(url))
    assert.strictEqual(viaSdk.statusCode, 413)
    // A refused upload does not use the URL up.
    const fits = await keyless.upload.private.file(new File(["0123456789"], "ten.txt")).url(url)
    assert.strictEqual(fits.size, 10)
  })

  it("refuses a type allow_mime_types does not list with 400 and the reason", async () => {
    const url = await pinata.upload.public.createSignedURL({ expires: 60, mimeTypes: ["image/*"] })
    const wrong = await failure(keyless.upload.public.file(new File(["just text"], "note.txt", { type: "text/plain" })).url(url))
    assert.strictEqual(wrong.statusCode, 400)
    assert.include(wrong.message, "Validation failed: this signed URL does not allow files of type text/plain (allow_mime_types: image/*)")
    // Sniffed when the browser says nothing of the type.
    const sniffed = await failure(keyless.upload.public.file(new File(["just text"], "note")).url(url))
    assert.include(sniffed.message, "does not allow files of type text/plain")
    const image = await keyless.upload.public.file(new File([png], "pixel.png", { type: "image/png" })).url(url)
    assert.strictEqual(image.mime_type, "image/png")
  })

  it("take a folder only when allow_mime_types lists directory", async () => {
    const site = () => [new File(["<title>x</title>"], "index.html", { type: "text/html" }), new File(["body{}"], "style.css", { type: "text/css" })]
    const plain = await pinata.upload.public.createSignedURL({ expires: 60, mimeTypes: ["text/*"] })
    const refused = await failure(keyless.upload.public.fileArray(site()).url(plain))
    assert.strictEqual(refused.statusCode, 400)
    assert.include(refused.message, "does not allow folders")
    const forFolder = await pinata.upload.public.createSignedURL({ expires: 60, mimeTypes: ["text/*"], forDirectory: true })
    const folder = await keyless.upload.public.fileArray(site()).name("site").url(forFolder)
    assert.deepInclude(folder, { mime_type: "directory", number_of_files: 2 })
    // The files in the folder are held to the listed types too.
    const imagesOnly = await pinata.upload.public.createSignedURL({ expires: 60, mimeTypes: ["image/*"], forDirectory: true })
    const notImages = await failure(keyless.upload.public.fileArray(site()).url(imagesOnly))
    assert.strictEqual(notImages.statusCode, 400)
    assert.include(notImages.message, "does not allow files of type text/html")
  })

  it("stops working when it expires, and refuses a URL that was altered", async () => {
    const date = seconds()
    const expiring = await pinata.upload.private.createSignedURL({ expires: 2, date })
    const kept = await pinata.upload.private.createSignedURL({ expires: 60 })
    const grantPath = (url: string) => new URL(url).pathname
    const altered = new URL(kept)
    // Another grant's id in the path: the signature is for its own.
    altered.pathname = grantPath(expiring)
    await expectRefusal(await call(altered.toString(), { method: "POST", body: form(new File(["x"], "x.txt")) }), 403, "bad-signature")
    const longer = new URL(kept)
    longer.searchParams.set("X-Expires", "31536000")
    await expectRefusal(await call(longer.toString(), { method: "POST", body: form(new File(["x"], "x.txt")) }), 403, "bad-signature")
    const unsigned = new URL(kept)
    unsigned.searchParams.delete("X-Signature")
    await expectRefusal(await call(unsigned.toString(), { method: "POST", body: form(new File(["x"], "x.txt")) }), 403, "malformed")
    // A link's signature is not an upload's.
    const file = await pinata.upload.private.file(new File([`linked ${crypto.randomUUID()}`], "linked.txt"))
    const link = new URL(await pinata.gateways.private.createAccessLink({ cid: file.cid, expires: 60 }))
    await expectRefusal(await call(`${server.url}${grantPath(kept)}${link.search.replace("X-Method=GET", "X-Method=POST")}`, { method: "POST", body: form(new File(["x"], "x.txt")) }), 403, "bad-signature")

    await sleep(Math.max(0, (date + 2) * 1000 - Date.now()) + 1100)
    const expired = await failure(keyless.upload.private.file(new File(["late"], "late.txt")).url(expiring))
    assert.strictEqual(expired.statusCode, 403)
    assert.include(expired.message, "expired")
    assert.strictEqual((await keyless.upload.private.file(new File(["on time"], "on-time.txt")).url(kept)).name, "on-time.txt")
  })

  it("stop working when the key that signed them is revoked", async () => {
    const revokable = newKey("org:files:write")
    const url = await sdk(revokable).upload.private.createSignedURL({ expires: 60 })
    cli(env, "key", "revoke", keyIdOf(revokable))
    await expectRefusal(await call(url, { method: "POST", body: form(new File(["x"], "x.txt")) }), 403, "key-revoked")
  })

  it("answer a browser's CORS preflight, and say so on the upload", async () => {
    const url = await pinata.upload.private.createSignedURL({ expires: 60 })
    const preflight = await call(url, { method: "OPTIONS", headers: { origin: "https://app.example", "access-control-request-method": "POST", "access-control-request-headers": "authorization,source" } })
    assert.strictEqual(preflight.status, 204)
    assert.strictEqual(preflight.headers.get("access-control-allow-origin"), "*")
    assert.include(preflight.headers.get("access-control-allow-headers")!, "Source")
    const uploaded = await call(url, { method: "POST", headers: { origin: "https://app.example" }, body: form(new File(["cors"], "cors.txt")) })
    assert.strictEqual(uploaded.status, 200)
    assert.strictEqual(uploaded.headers.get("access-control-allow-origin"), "*")
  })

  it("refuse bad requests for a URL with a clear 4xx", async () => {
    const sign = (body: unknown, token = writer) => call("/v3/files/sign", { method: "POST", token, body: JSON.stringify(body) })
    const expect400 = async (response: Response, detail: RegExp) => {
      const body = await bodyOf(response)
      assert.strictEqual(response.status, 400, body.error)
      assert.match(body.error, /^Validation failed: /)
      assert.match(body.error, detail)
    }
    await expect400(await sign({ date: seconds() }), /expires/)
    await expect400(await sign({ date: seconds(), expires: 60, max_file_size: 0 }), /max_file_size|greater than or equal to 1/)
    await expect400(await sign({ date: seconds(), expires: 60, allow_mime_types: ["not a type"] }), /not a mime type/)
    await expect400(await sign({ date: seconds(), expires: 60, keyvalues: { n: 1 } }), /keyvalues/)
    await expect400(await sign({ date: seconds(), expires: 60, network: "moon" }), /network/)
    await expect400(await sign({ date: seconds(), expires: 31_536_001 }), /expires must be/)
    const reader = newKey("org:files:read")
    assert.strictEqual((await sign({ date: seconds(), expires: 60 }, reader)).status, 403)
    assert.strictEqual((await call("/v3/files/sign", { method: "POST", body: "{}" })).status, 401)
    const url = await pinata.upload.private.createSignedURL({ expires: 60 })
    await expect400(await call(url, { method: "POST", body: new FormData() }), /a file part named "file" is required/)
    await expect400(await call(url, { method: "POST", headers: { "upload-length": "100" } }), /resumable/)
  })
})

/** A multipart body with one file, as a browser's form sends it. */
const form = (file: File) => {
  const body = new FormData()
  body.append("file", file, file.name)
  return body
}
