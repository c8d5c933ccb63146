/**
 * `npm run bench:http`: signature GET and POST through Cairn's HTTP stack, against a raw `node:http` server in
 * the same process, on the same database, doing the same work by hand (verify the API key's JWT with jose, with
 * the same memo of verified tokens Cairn keeps, and check it is not revoked; GET: look the signature up; POST: read the CID's first upload date, recover the
 * EIP-712 signer with viem, insert). Load comes from autocannon on loopback. PGlite in a temporary directory by
 * default; a fresh database on the server when DATABASE_URL is set.
 */
import { ApiKeys, Files, Workspaces } from "@cairn/application"
import { JoseTokenSigner, VerifiedTokens } from "@cairn/auth"
import { CairnHttp } from "@cairn/http"
import { PgDatabase } from "@cairn/event-store-pg"
import { layerFreshPostgres } from "@cairn/event-store-pg/testing"
import { CairnRuntime } from "@cairn/runtime"
import { domain, EoaSignatureVerifier, primaryType, types } from "@cairn/signatures"
import { NodeHttpServer, NodeServices } from "@effect/platform-node"
import { ConfigProvider, Effect, Layer, Stream } from "effect"
import { SqlClient } from "effect/sql"
import * as jose from "jose"
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { LoadSpec } from "./LoadSpec.ts"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"

const url = process.env["DATABASE_URL"] || undefined
const dataDir = mkdtempSync(join(tmpdir(), "cairn-bench-http-"))
// POSTs run for a fixed time over this many prepared signatures per server (each CID can be signed once).
const posts = Number(process.env["BENCH_POSTS"] ?? 3000)
const postSeconds = Number(process.env["BENCH_POST_SECONDS"] ?? 4)
const seconds = Number(process.env["BENCH_SECONDS"] ?? 5)
const cairnPort = 38_000 + Math.floor(Math.random() * 1000)
const rawPort = cairnPort + 1000

const database = url === undefined ? PgDatabase.layerPglite(join(dataDir, "pg")) : layerFreshPostgres(url, 10)

const app = CairnHttp.serve(NodeHttpServer.layer(createServer, { port: cairnPort, host: "127.0.0.1" })).pipe(
  Layer.provideMerge(CairnRuntime.layerApplication(database)),
  Layer.provideMerge(NodeServices.layer)
)

/** Runs bench/load.ts in its own process: a load generator sharing the servers' event loop skews them. */
const load = (title: string, spec: LoadSpec) =>
  Effect.promise(async () => {
    const file = join(dataDir, `load-${title.replace(/\W+/g, "-")}.json`)
    writeFileSync(file, JSON.stringify(spec))
    const output = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, [fileURLToPath(new URL("load.ts", import.meta.url)), file], { encoding: "utf8", maxBuffer: 1 << 20 }, (error, stdout) =>
        error ? reject(error) : resolve(stdout))
    )
    const result = JSON.parse(output.trim().split("\n").at(-1)!) as { rps: number; p99: number; non2xx: number; errors: number; timeouts: number }
    if (result.non2xx > 0 || result.errors > 0) {
      // A POST run that outpaces its prepared signatures signs a CID twice (409): give it a larger pool.
      const hint = spec.method === "POST" ? " (if these are 409s, the prepared signatures ran out: raise BENCH_POSTS)" : ""
      throw new Error(`${title}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts${hint}`)
    }
    return result
  })

const program = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const workspaces = yield* Workspaces
  const keys = yield* ApiKeys
  const files = yield* Files
  const workspaceId = yield* workspaces.create({ name: "bench", plan: "pro", internal: false })
  const { token } = yield* keys.create({ workspaceId, userId: "bench", scopes: ["org:files:read", "org:files:write"] })
  const principal = yield* keys.authenticate(token)

  // Content to sign: two CIDs per POST request (one set for Cairn, one for raw), all first uploaded here.
  const account = privateKeyToAccount(generatePrivateKey())
  const signed: Array<{ cid: string; body: string }> = []
  for (let i = 0; i < posts * 2; i++) {
    const file = yield* files.upload(principal, {
      network: "public", name: `f${i}`, mimeType: "text/plain", groupId: null, keyvalues: {}, cidVersion: 1,
      content: Stream.make(new TextEncoder().encode(`bench ${i} ${workspaceId}`))
    })
    const signature = yield* Effect.promise(() => account.signTypedData({ domain, types, primaryType, message: { address: account.address, cid: file.cid, date: file.createdAt } }))
    signed.push({ cid: file.cid, body: JSON.stringify({ signature, address: account.address }) })
  }
  const cairnSet = signed.slice(0, posts)
  const rawSet = signed.slice(posts)

  // The raw server: the same checks and the same SQL, written by hand.
  yield* sql`CREATE TABLE bench_signatures (network text, cid text, workspace_id text, address text, signature text, created_at timestamptz, PRIMARY KEY (network, cid))`
  const keyFile = JSON.parse(readFileSync(JoseTokenSigner.keyFilePath(dataDir), "utf8")) as { active: jose.JWK }
  const { d: _private, ...publicJwk } = keyFile.active
  const publicKey = yield* Effect.promise(() => jose.importJWK(publicJwk, "ES256"))
  const run = <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>) => Effect.runPromise(Effect.provideService(effect, SqlClient.SqlClient, sql))
  // The same memo of verified tokens Cairn keeps, so both servers do the same work per request.
  const verified = VerifiedTokens.make()
  const keyIdOf = async (bearer: string) => {
    const known = verified.get(bearer, Date.now())
    if (known !== undefined) return known.keyId
    const { payload } = await jose.jwtVerify(bearer, publicKey, { algorithms: ["ES256"], issuer: "cairn" })
    verified.remember(bearer, { userId: payload.sub ?? "", workspaceId: payload["wid"] as string, keyId: payload.jti!, scopes: payload["scp"] as Array<string> }, Number.POSITIVE_INFINITY)
    return payload.jti!
  }
  const authenticate = async (request: IncomingMessage) => {
    const bearer = /^Bearer (\S+)$/.exec(request.headers.authorization ?? "")?.[1]
    if (bearer === undefined) return undefined
    const keyId = await keyIdOf(bearer)
    const [key] = await run(sql<{ revoked_at: Date | null; workspace_id: string }>`SELECT revoked_at, workspace_id FROM cairn_api_keys WHERE key_id = ${keyId}`)
    return key !== undefined && key.revoked_at === null ? key.workspace_id : undefined
  }
  const respond = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { "content-type": "application/json; charset=utf-8", "x-request-id": crypto.randomUUID(), "strict-transport-security": "max-age=31536000; includeSubDomains" })
    response.end(JSON.stringify(body))
  }
  const verifier = yield* EoaSignatureVerifier.make
  const raw = createServer(async (request, response) => {
    const workspace = await authenticate(request)
    if (workspace === undefined) return respond(response, 401, { error: "Unauthorized" })
    const cid = request.url!.split("/").at(-1)!
    if (request.method === "GET") {
      const [row] = await run(sql<{ signature: string }>`SELECT signature FROM bench_signatures WHERE network = 'public' AND cid = ${cid}`)
      return row === undefined ? respond(response, 404, { error: "Signature not found" }) : respond(response, 200, { data: { cid, signature: row.signature } })
    }
    let text = ""
    for await (const chunk of request) text += chunk
    const body = JSON.parse(text) as { signature: string; address: string }
    const [first] = await run(sql<{ created_at: Date }>`SELECT min(created_at) AS created_at FROM cairn_files WHERE network = 'public' AND cid = ${cid} AND workspace_id = ${workspace}`)
    const ok = await Effect.runPromise(verifier.verify({ address: body.address, cid, date: first!.created_at.toISOString(), signature: body.signature }))
    if (!ok) return respond(response, 400, { error: "Validation failed: signature does not verify" })
    await run(sql`INSERT INTO bench_signatures VALUES ('public', ${cid}, ${workspace}, ${body.address}, ${body.signature}, now())`)
    respond(response, 200, { data: { cid, signature: body.signature } })
  })
  yield* Effect.promise(() => new Promise<void>((resolve) => raw.listen(rawPort, "127.0.0.1", resolve)))

  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" }
  const posting = (port: number, set: ReadonlyArray<{ cid: string; body: string }>): LoadSpec => ({
    url: `http://127.0.0.1:${port}`,
    method: "POST",
    headers,
    items: set.map((item) => ({ path: `/v3/files/public/signature/${item.cid}`, body: item.body })),
    // A timed run: autocannon ends `amount` runs only on its one-second tick, which blurs a short run's rate.
    seconds: postSeconds
  })
  const getting = (port: number, set: ReadonlyArray<{ cid: string }>, options: { amount?: number; seconds?: number }): LoadSpec => ({
    url: `http://127.0.0.1:${port}`,
    method: "GET",
    headers,
    items: set.map((item) => ({ path: `/v3/files/public/signature/${item.cid}` })),
    ...options
  })

  const cairnPost = yield* load("Cairn POST", posting(cairnPort, cairnSet))
  const rawPost = yield* load("raw POST", posting(rawPort, rawSet))
  // GET what each server actually signed during its timed run.
  const cairnSigned = yield* sql<{ cid: string }>`SELECT cid FROM cairn_signatures WHERE network = 'public'`
  const rawSigned = yield* sql<{ cid: string }>`SELECT cid FROM bench_signatures`
  yield* load("Cairn GET warm-up", getting(cairnPort, cairnSigned, { amount: 1000 }))
  yield* load("raw GET warm-up", getting(rawPort, rawSigned, { amount: 1000 }))
  const cairnGet = yield* load("Cairn GET", getting(cairnPort, cairnSigned, { seconds }))
  const rawGet = yield* load("raw GET", getting(rawPort, rawSigned, { seconds }))
  raw.close()

  const row = (name: string, cairn: { rps: number; p99: number }, baseline: { rps: number; p99: number }, target: number) => ({
    endpoint: name,
    "cairn req/s": cairn.rps,
    "raw req/s": baseline.rps,
    ratio: `${(cairn.rps / baseline.rps).toFixed(2)}x`,
    "cairn p99 ms": cairn.p99,
    "raw p99 ms": baseline.p99,
    target: `>= ${target}x`,
    met: cairn.rps >= target * baseline.rps ? "yes" : "NO"
  })
  console.log(`\nbench:http on ${url === undefined ? "embedded PGlite" : "PostgreSQL"}, Node ${process.version}, 10 connections\n`)
  console.table([
    row("GET /v3/files/public/signature/{cid}", cairnGet, rawGet, 0.7),
    row("POST /v3/files/public/signature/{cid} (new signatures)", cairnPost, rawPost, 0.8)
  ])
})

await Effect.runPromise(
  program.pipe(
    Effect.provide(app),
    Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ DATA_DIR: dataDir }))),
    Effect.scoped
  )
).finally(() => rmSync(dataDir, { recursive: true, force: true }))
