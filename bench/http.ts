/**
 * `npm run bench:http`: signature GET and POST through Cairn's HTTP stack, against a raw `node:http` server in
 * the same process, on the same database, doing the same work by hand (verify the API key's JWT with jose, with
 * the same memo of verified tokens Cairn keeps, and check it is not revoked; GET: look the signature up; POST: read the CID's first upload date, recover the
 * EIP-712 signer with viem, insert). Load comes from autocannon on loopback, in its own process. Each endpoint runs
 * paired (Paired.ts): rounds of one block per server, the order rotating, printing the median and min–max of the
 * per-round ratios. PGlite in a temporary directory by default; a fresh database on the server when DATABASE_URL is
 * set. GETs also run against a second raw server that reads the key and the signature in one statement, as Cairn
 * does (the `raw1` row). BENCH_ROUNDS (10) rounds; blocks of BENCH_GET_BLOCK (5,000) GETs and BENCH_POST_BLOCK (300) POSTs. The table
 * also gives this process's CPU per request, per side (the load generator is another process).
 * BENCH_CPU_PROF=<file>: after the rounds, four more blocks of Cairn's GETs run under V8's sampling profiler (in
 * process), written to that file, then four of the raw server's, to `<file>.raw` (open them in Chrome's DevTools).
 */
import { ApiKeys, Files, Workspaces } from "@cairn/application"
import { VerifiedTokens } from "@cairn/auth"
import { JoseTokenSigner } from "@cairn/auth/node"
import { CairnHttp } from "@cairn/http"
import { PgDatabase } from "@cairn/event-store-pg"
import { layerFreshPostgres } from "@cairn/event-store-pg/testing"
import { CairnRuntime } from "@cairn/runtime"
import { domain, EoaSignatureVerifier, primaryType, types } from "@cairn/signatures"
import { NodeHttpServer, NodeServices } from "@effect/platform-node"
import { ConfigProvider, Effect, Layer, Stream } from "effect"
import { SqlClient } from "effect/sql"
import * as jose from "jose"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { Session } from "node:inspector/promises"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as LoadGenerator from "./LoadGenerator.ts"
import type { LoadSpec } from "./LoadSpec.ts"
import * as Paired from "./Paired.ts"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"

const url = process.env["DATABASE_URL"] || undefined
const dataDir = mkdtempSync(join(tmpdir(), "cairn-bench-http-"))
const rounds = Number(process.env["BENCH_ROUNDS"] ?? 10)
const getBlock = Number(process.env["BENCH_GET_BLOCK"] ?? 5000)
// Each CID can be signed once: every POST block takes the next CIDs of its server's own prepared set.
const postBlock = Number(process.env["BENCH_POST_BLOCK"] ?? 300)
const warmUpBlocks = 2
const posts = (rounds + warmUpBlocks) * postBlock
const cairnPort = 38_000 + Math.floor(Math.random() * 1000)
const rawPort = cairnPort + 1000
const rawOnePort = cairnPort + 2000

const database = url === undefined ? PgDatabase.layerPglite(join(dataDir, "pg")) : layerFreshPostgres(url, 10)

const app = CairnHttp.serve(NodeHttpServer.layer(createServer, { port: cairnPort, host: "127.0.0.1" })).pipe(
  Layer.provideMerge(CairnRuntime.layerApplication(database)),
  Layer.provideMerge(NodeServices.layer)
)

const loadGenerator = Effect.acquireRelease(Effect.sync(LoadGenerator.start), (generator) => Effect.sync(generator.close))

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
  // A second raw GET baseline: the key's standing and the signature in one statement, one round trip, as Cairn's
  // signature GET reads them since session 28 (docs/performance.md). The first stays as the issue defined it.
  const rawOne = createServer(async (request, response) => {
    const bearer = /^Bearer (\S+)$/.exec(request.headers.authorization ?? "")?.[1]
    if (bearer === undefined) return respond(response, 401, { error: "Unauthorized" })
    const keyId = await keyIdOf(bearer)
    const cid = request.url!.split("/").at(-1)!
    const [row] = await run(sql<{ revoked_at: Date | null; workspace_id: string | null; signature: string | null }>`SELECT k.revoked_at, k.workspace_id, s.signature
      FROM (SELECT 1) AS one LEFT JOIN cairn_api_keys k ON k.key_id = ${keyId} LEFT JOIN bench_signatures s ON s.network = 'public' AND s.cid = ${cid}`)
    if (row?.workspace_id == null || row.revoked_at !== null) return respond(response, 401, { error: "Unauthorized" })
    return row.signature === null ? respond(response, 404, { error: "Signature not found" }) : respond(response, 200, { data: { cid, signature: row.signature } })
  })
  yield* Effect.promise(() => new Promise<void>((resolve) => rawOne.listen(rawOnePort, "127.0.0.1", resolve)))

  const generator = yield* loadGenerator
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" }
  const p99s: Record<string, Array<number>> = {}
  // This process's CPU per request over each block (user + system, process.cpuUsage): both servers run here, one
  // block at a time, and the load generator runs in its own process, so it is the serving side's CPU alone (with
  // PostgreSQL; PGlite's queries run in this process too). A ratio of rates swings with the machine's load; this
  // does much less.
  const cpuMicros: Record<string, Array<number>> = {}
  const systemMicros: Record<string, Array<number>> = {}
  /** One block of `spec` as a paired block, keeping its p99 latency and CPU per request for the table. */
  const block = (title: string, spec: LoadSpec) =>
    Effect.suspend(() => {
      const before = process.cpuUsage()
      return Effect.promise(() => generator.run(title, spec)).pipe(Effect.map((result) => {
        const used = process.cpuUsage(before)
        ;(p99s[title] ??= []).push(result.p99)
        ;(cpuMicros[title] ??= []).push((used.user + used.system) / result.total)
        ;(systemMicros[title] ??= []).push(used.system / result.total)
        return { operations: result.total, milliseconds: result.seconds * 1000 }
      }))
    })
  const posting = (port: number, set: ReadonlyArray<{ cid: string; body: string }>): LoadSpec => ({
    url: `http://127.0.0.1:${port}`,
    method: "POST",
    headers,
    items: set.map((item) => ({ path: `/v3/files/public/signature/${item.cid}`, body: item.body })),
    amount: set.length
  })
  const getting = (port: number, set: ReadonlyArray<{ cid: string }>): LoadSpec => ({
    url: `http://127.0.0.1:${port}`,
    method: "GET",
    headers,
    items: set.map((item) => ({ path: `/v3/files/public/signature/${item.cid}` })),
    amount: getBlock
  })
  const nextPosts = (set: ReadonlyArray<{ cid: string; body: string }>) => {
    let taken = 0
    return () => set.slice(taken, taken += postBlock)
  }
  const cairnPosts = nextPosts(cairnSet)
  const rawPosts = nextPosts(rawSet)

  for (let i = 0; i < warmUpBlocks; i++) {
    yield* block("warm-up", posting(cairnPort, cairnPosts()))
    yield* block("warm-up", posting(rawPort, rawPosts()))
  }
  const post = yield* Paired.rounds({
    rounds,
    measured: () => block("Cairn POST", posting(cairnPort, cairnPosts())),
    baselines: { raw: () => block("raw POST", posting(rawPort, rawPosts())) }
  })
  // GET what each server signed.
  const cairnSigned = yield* sql<{ cid: string }>`SELECT cid FROM cairn_signatures WHERE network = 'public'`
  const rawSigned = yield* sql<{ cid: string }>`SELECT cid FROM bench_signatures`
  for (let i = 0; i < warmUpBlocks; i++) {
    yield* block("warm-up", getting(cairnPort, cairnSigned))
    yield* block("warm-up", getting(rawPort, rawSigned))
    yield* block("warm-up", getting(rawOnePort, rawSigned))
  }
  const get = yield* Paired.rounds({
    rounds,
    measured: () => block("Cairn GET", getting(cairnPort, cairnSigned)),
    baselines: {
      raw: () => block("raw GET", getting(rawPort, rawSigned)),
      one: () => block("raw1 GET", getting(rawOnePort, rawSigned))
    }
  })
  const profileFile = process.env["BENCH_CPU_PROF"]
  if (profileFile) {
    const session = new Session()
    session.connect()
    yield* Effect.promise(() => session.post("Profiler.setSamplingInterval", { interval: 100 }))
    yield* Effect.promise(() => session.post("Profiler.enable"))
    for (const [file, port, set] of [[profileFile, cairnPort, cairnSigned], [`${profileFile}.raw`, rawPort, rawSigned]] as const) {
      yield* Effect.promise(() => session.post("Profiler.start"))
      for (let i = 0; i < 4; i++) yield* block("profiled", getting(port, set))
      const { profile } = yield* Effect.promise(() => session.post("Profiler.stop"))
      writeFileSync(file, JSON.stringify(profile))
    }
    session.disconnect()
  }
  raw.close()
  rawOne.close()

  const median = (values: ReadonlyArray<number> = []) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
  /** One line of the table: Cairn against one baseline (`raw`, or `one` for the one-round-trip raw GET). */
  const row = <B extends string>(name: string, method: string, paired: Paired.Paired<B>, target: number, baseline: B, side = "raw") => ({
    endpoint: name,
    "cairn req/s": paired.rates.measured,
    "raw req/s": paired.rates[baseline],
    "ratio (median, min–max)": Paired.show(paired.ratios[baseline]),
    "cairn p99 ms": median(p99s[`Cairn ${method}`]),
    "raw p99 ms": median(p99s[`${side} ${method}`]),
    "cairn CPU µs/req (sys)": `${Math.round(median(cpuMicros[`Cairn ${method}`]) ?? 0)} (${Math.round(median(systemMicros[`Cairn ${method}`]) ?? 0)})`,
    "raw CPU µs/req (sys)": `${Math.round(median(cpuMicros[`${side} ${method}`]) ?? 0)} (${Math.round(median(systemMicros[`${side} ${method}`]) ?? 0)})`,
    target: `>= ${target}x`,
    met: paired.ratios[baseline].median >= target ? "yes" : "NO"
  })
  console.log(`\nbench:http on ${url === undefined ? "embedded PGlite" : "PostgreSQL"}, Node ${process.version}, 10 connections, ` +
    `${rounds} paired rounds of ${getBlock} GETs / ${postBlock} POSTs per server\n`)
  console.log(`load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")} at the end; CPU per request is the median over the blocks\n`)
  console.table([
    row("GET /v3/files/public/signature/{cid}", "GET", get, 0.85, "raw"),
    row("GET, raw in one round trip as Cairn", "GET", get, 0.85, "one", "raw1"),
    row("POST /v3/files/public/signature/{cid} (new signatures)", "POST", post, 0.9, "raw")
  ])
})

await Effect.runPromise(
  program.pipe(
    Effect.provide(app),
    Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ DATA_DIR: dataDir }))),
    Effect.scoped
  )
).finally(() => rmSync(dataDir, { recursive: true, force: true }))
