/**
 * The OpenAPI document Cairn serves at `/openapi.json`: a valid OpenAPI 3.1 document (checked by a maintained
 * validator), that lists exactly the routes the router serves (taken from the router's own registrations), with
 * every documented error string as an example; and the docs page that renders it from Cairn's own copy of Scalar.
 */
import { CairnHttp, OpenApi, RouteCatalog } from "@cairn/http"
import { ApiKit, ResponseValidation, TestRuntime } from "@cairn/runtime/testing"
import { Validator } from "@seriousme/openapi-schema-validator"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { HttpRouter } from "effect/http"

const api = TestRuntime.makeTestApi()
afterAll(api.dispose)

const get = async (path: string) => {
  const response = await api.web.handler(new Request(`http://cairn${path}`))
  return { status: response.status, type: response.headers.get("content-type"), text: await response.text() }
}
const document = async () => JSON.parse((await get("/openapi.json")).text) as OpenApi.Document

/**
 * Routes served beside the API that its document leaves out: the gateway's second path (`/files`, documented with
 * `/ipfs/{cid}`), the CORS preflight of presigned uploads, Caddy's ask, the docs.
 */
const infrastructure = new Set([
  "GET /files/:cid/*",
  "OPTIONS /v3/files/signed/:grantId",
  "GET /tls/ask",
  "GET /openapi.json",
  "GET /docs",
  "GET /docs/scalar.js"
])

/** Every method and path the routes register, seen by a router that records each `add`. */
const servedRoutes = Effect.gen(function*() {
  const served: Array<string> = []
  const router = yield* HttpRouter.make
  const recording = Layer.succeed(HttpRouter.HttpRouter, {
    ...router,
    add: (method, path, handler, options) => {
      served.push(`${method} ${path}`)
      return router.add(method, path, handler, options)
    }
  })
  yield* Layer.build(CairnHttp.routes.pipe(Layer.provide(recording), Layer.provide(TestRuntime.layerTest())))
  return served
}).pipe(Effect.scoped)

describe("the OpenAPI document", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const result = await new Validator().validate(await document())
    assert.isTrue(result.valid, JSON.stringify(result.errors, null, 1)?.slice(0, 2000))
    assert.strictEqual((await document())["openapi"], "3.1.0")
  })

  it("lists every route the router serves, and serves every route it lists", async () => {
    const served = (await Effect.runPromise(servedRoutes)).filter((route) => !route.startsWith("* "))
    const documented = Object.entries((await document()).paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`))
    const servedAsOpenApi = served.filter((route) => !infrastructure.has(route)).map((route) => {
      const [method, path] = route.split(" ")
      // The gateway's `/ipfs/:cid/*` serves `/ipfs/{cid}` and every path under it: documented as the former.
      return `${method} ${OpenApi.toOpenApiPath(path!.replace(/\/\*$/, ""))}`
    })
    assert.deepStrictEqual(servedAsOpenApi.filter((r) => !documented.includes(r)), [], "served but not documented")
    assert.deepStrictEqual(documented.filter((r) => !servedAsOpenApi.includes(r)), [], "documented but not served")
    assert.isAbove(documented.length, 80)
  })

  it("describes the probes and the gateway, and groups operations by what they are for: none under \"other\"", async () => {
    const doc = await document()
    const paths = doc.paths
    assert.deepStrictEqual(Object.keys(paths["/healthz"] ?? {}), ["get"])
    assert.deepStrictEqual(Object.keys(paths["/readyz"] ?? {}), ["get"])
    assert.deepStrictEqual(Object.keys(paths["/ipfs/{cid}"] ?? {}), ["get"])
    assert.deepStrictEqual(Object.keys(paths["/readyz"]?.["get"]?.responses ?? {}).sort(), ["200", "500", "503"])
    assert.include(paths["/ipfs/{cid}"]?.["get"]?.["tags"] as Array<string>, "gateway")
    assert.include(paths["/healthz"]?.["get"]?.["tags"] as Array<string>, "operations")
    const tags = (doc["tags"] as Array<{ name: string }>).map((tag) => tag.name)
    assert.strictEqual(tags[0], "v3 data", "the files API's groups first")
    assert.notInclude(tags, "other")
    const used = new Set(Object.values(paths).flatMap((operations) => Object.values(operations).flatMap((op) => op["tags"] as Array<string>)))
    assert.deepStrictEqual([...used].sort(), [...tags].sort(), "every group used is listed, once")
    // The probes' own bodies, checked against the document as every HTTP test's answers are.
    const validator = ResponseValidation.make(doc)
    validator.check("GET", "/healthz", 200, { status: "ok" })
    validator.check("GET", "/readyz", 503, { status: "unavailable", reason: "event store unreachable" })
    assert.throws(() => validator.check("GET", "/healthz", 200, { status: "ok", extra: 1 }), /does not describe/)
  })

  it("shows each documented error string as an example under its status", async () => {
    const paths = (await document()).paths
    const examples = (path: string, method: string, status: number) =>
      Object.values((paths[path]?.[method]?.responses[String(status)]?.content?.["application/json"] as { examples?: Record<string, { value: { error: string } }> })?.examples ?? {})
        .map((example) => example.value.error)
    assert.include(examples("/v0/agents", "post", 403), "Agent limit reached")
    assert.include(examples("/v0/agents", "post", 500), "Gateway failed to start")
    assert.include(examples("/v0/agents/{agentId}/restart", "post", 400), "Invalid version")
    assert.include(examples("/v0/agents/{agentId}/snapshots/reset", "post", 404), "Snapshot not found")
    assert.include(examples("/v0/secrets", "post", 503), "Secrets not configured")
    assert.include(examples("/v3/files/{network}/signature/{cid}", "get", 401), "Unauthorized")
    assert.include(examples("/v3/files/{network}/signature/{cid}", "post", 403), "Forbidden: this key lacks the org:files:write scope")
    // Errors whose classes live outside the domain package: the DNS port's, the hub's, the vault's.
    assert.include(examples("/v0/agents/{agentId}/domains/{domainId}/verify", "post", 503), "DNS lookup failed")
    assert.include(examples("/v0/clawhub/{slug}", "get", 503), "Skill hub unavailable: <registry> could not be reached")
    assert.include(examples("/admin/secrets/rotate-master-key", "post", 503), "Secrets not configured")
  })

  it("describes a request body with the Schema the route decodes it with", async () => {
    const restart = (await document()).paths["/v0/agents/{agentId}/restart"]?.["post"] as { requestBody?: { required: boolean; content: Record<string, { schema: { properties: object } }> } }
    assert.isFalse(restart.requestBody?.required)
    assert.property(restart.requestBody?.content["application/json"]?.schema.properties, "version")
  })
})

describe("the response check every HTTP test runs", () => {
  it("accepts what a route documents and refuses what it does not", async () => {
    const validator = ResponseValidation.make(await document())
    const secret = { id: "s", userId: "ada", name: "A", createdAt: "t", updatedAt: "t" }
    validator.check("POST", "/v0/secrets", 201, { success: true, secret })
    validator.check("POST", "/v0/secrets", 409, { error: "Duplicate secret name" })
    assert.throws(() => validator.check("POST", "/v0/secrets", 201, { success: true, secret: { ...secret, userId: 7 } }), /does not describe/)
    assert.throws(() => validator.check("POST", "/v0/secrets", 202, { success: true }), /does not list/)
    assert.throws(() => validator.check("POST", "/v0/secrets", 400, { message: "no error field" }), /does not describe/)
    validator.check("GET", "/tls/ask", 200, {}) // outside the document: not the check's to judge
  })
})

describe("the response Schemas", () => {
  it("describe the JSON answer of every operation, closed to fields they do not name", async () => {
    const paths = (await document()).paths
    const undescribed: Array<string> = []
    for (const [path, operations] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          const json = response.content?.["application/json"]
          if (Number(status) < 300 && json !== undefined && json.schema === undefined) undescribed.push(`${method.toUpperCase()} ${path} ${status}`)
        }
      }
    }
    assert.deepStrictEqual(undescribed, [])
    const agent = paths["/v0/agents/{agentId}"]?.["get"]?.responses["200"]?.content?.["application/json"]?.schema as { additionalProperties?: unknown; properties?: Record<string, unknown>; required?: Array<string> }
    assert.strictEqual(agent.additionalProperties, false)
    assert.property(agent.properties, "provisioning")
    assert.notInclude(agent.required ?? [], "provisioning")
  })

  it.effect("drop a field the Schema does not name in production, and refuse it under StrictResponses (the test runtime)", () =>
    Effect.gen(function*() {
      const Answer = Schema.Struct({ name: Schema.String })
      const value = { name: "a", secret: "s" } as typeof Answer.Type
      assert.deepStrictEqual(yield* RouteCatalog.encode(Answer, value), { name: "a" })
      const refused = yield* Effect.exit(RouteCatalog.encode(Answer, value, true))
      assert.strictEqual(refused._tag, "Failure")
    }))

  it("check every JSON answer of a tour of the API: none is left unchecked", async () => {
    const workspace = await api.workspace(2)
    const { token, keyId } = await api.key(workspace, ["org:agents", "org:files:read", "org:files:write", "org:groups:read", "org:groups:write", "org:keys"])
    const agentId = await ApiKit.make(api.request).newAgent(token, "Tour")
    const agent = `/v0/agents/${agentId}`
    const secret = await api.request("POST", "/v0/secrets", token, { name: "TOUR_KEY", value: "v" })
    const group = `/v3/groups/public/${(await api.request("POST", "/v3/groups/public", token, { name: "Tour" })).body!["data"].id}`
    const made = await api.request("POST", "/v3/pinata/keys", token, { keyName: "tour", permissions: { admin: true }, maxUses: 3 })
    const tour: Array<[string, string, unknown?]> = [
      ["GET", agent],
      ["GET", `${agent}/devices`],
      ["POST", `${agent}/platform/token`],
      ["GET", `${agent}/events`],
      ["POST", `${agent}/secrets`, { secretIds: [secret.body!["secret"].id] }],
      ["GET", "/v0/skills"],
      ["GET", "/v0/clawhub"],
      ["GET", `${agent}/skills`],
      ["GET", `${agent}/skills/updates`],
      ["GET", "/v0/templates"],
      ["GET", "/v0/templates/schema/manifest.v1.json"],
      ["POST", "/v0/templates/validate", { manifest: { name: "x" } }],
      ["POST", `${agent}/console/exec`, { command: "echo hi" }],
      ["POST", `${agent}/files/upload`, { filename: "a.txt", contentBase64: "aGk=" }],
      ["GET", `${agent}/config`],
      ["POST", `${agent}/config/validate`, { config: {} }],
      ["GET", `${agent}/tasks`],
      ["GET", `${agent}/snapshots/sync`],
      ["GET", `${agent}/channels`],
      ["GET", `${agent}/domains`],
      ["POST", `${agent}/domains`, { subdomain: "tour-agent", targetPort: 3000 }],
      ["GET", "/.well-known/jwks.json"],
      ["POST", "/v3/files/sign", { expires: 60, max_file_size: 10, allow_mime_types: ["image/*"] }],
      ["POST", "/v3/files/sign", { url: "https://gateway.example/files/bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4", date: Math.floor(Date.now() / 1000), expires: 30, method: "GET" }],
      ["GET", "/v3/groups/public"],
      ["GET", group],
      ["PUT", group, { name: "Tour 2", is_public: true }],
      ["POST", "/v3/groups/private", { name: "Tour" }],
      ["DELETE", group],
      ["GET", "/v3/pinata/keys"],
      ["POST", "/v3/pinata/keys", { keyName: "tour 2", permissions: { resources: ["org:files:write"] } }],
      ["PUT", `/v3/pinata/keys/${made.body!["pinata_api_key"]}`],
      ["GET", `/admin/agents/${agentId}/events`],
      ["POST", "/admin/secrets/rotate-master-key"]
    ]
    for (const [method, path, body] of tour) {
      const reply = await api.request(method, path, path.startsWith("/admin") ? TestRuntime.adminToken : token, body)
      assert.isBelow(reply.status, 300, `${method} ${path}: ${JSON.stringify(reply.body)}`)
    }
    assert.strictEqual((await api.request("POST", `/admin/keys/${keyId}/revoke`, TestRuntime.adminToken)).status, 200)
    // Every answer above was checked against its Schema (a failed check throws); none was only recorded.
    assert.deepStrictEqual([...(await api.responses()).skipped], [])
  })
})

describe("the docs page", () => {
  it("renders the document with the Scalar bundle Cairn serves itself", async () => {
    const page = await get("/docs")
    assert.strictEqual(page.status, 200)
    assert.match(page.type ?? "", /^text\/html/)
    assert.include(page.text, "data-url=\"/openapi.json\"")
    assert.include(page.text, "src=\"/docs/scalar.js\"")
    const bundle = await get("/docs/scalar.js")
    assert.strictEqual(bundle.status, 200)
    assert.match(bundle.type ?? "", /javascript/)
    assert.isAbove(bundle.text.length, 100_000)
  })
})
