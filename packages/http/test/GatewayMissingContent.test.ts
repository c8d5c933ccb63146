/**
 * `GET /ipfs/{cid}` for a CID a workspace published but the gateway's content store does not hold: 404
 * `Content not found` in every format (never a 500), and 504 `Content store timed out` when a remote store (Kubo)
 * does not answer. The application is the real one (files uploaded through `/v3/files` into its own store); only the
 * gateway is handed another store: an empty embedded one, or Kubo on a loopback port that accepts connections and
 * never answers.
 */
import { ContentStore } from "@cairn/content-store"
import { HeliaContentStore } from "@cairn/content-store-helia"
import { KuboContentStore } from "@cairn/content-store-kubo"
import { CairnHttp } from "@cairn/http"
import { TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type Context, Layer, Logger, ManagedRuntime } from "effect"
import { HttpRouter } from "effect/http"
import { createServer, type Server } from "node:http"

/** A loopback HTTP server that takes every request and never answers it. */
const silentServer = () =>
  new Promise<{ readonly server: Server; readonly url: string }>((resolve) => {
    const server = createServer(() => {})
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resolve({ server, url: `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}` })
    })
  })

const runtime = ManagedRuntime.make(TestRuntime.layerTest())
type App = ManagedRuntime.ManagedRuntime.Services<typeof runtime>
/** What the routes log, kept for the tests to read (and not printed). */
const logged: Array<string> = []
const captured = Logger.layer([Logger.make(({ message }) => logged.push(String(message)))])

/**
 * Cairn's routes over the one test application, the gateway reading from `store` instead of the application's own.
 * Each handler builds its routes afresh (no shared memo map), so each gets its own store.
 */
const routesWith = (app: Context.Context<App>, store: Layer.Layer<ContentStore, unknown>) =>
  HttpRouter.toWebHandler(
    CairnHttp.routes.pipe(Layer.provide(Layer.merge(Layer.succeedContext(app), store)), Layer.provideMerge(captured)),
    { disableLogger: true }
  )

let silent: { readonly server: Server; readonly url: string }
let emptyStore: ReturnType<typeof routesWith>
let stuckKubo: ReturnType<typeof routesWith>
let cid: string

beforeAll(async () => {
  silent = await silentServer()
  const app = await runtime.context()
  emptyStore = routesWith(app, HeliaContentStore.layerMemory)
  stuckKubo = routesWith(app, KuboContentStore.layer({ publicApiUrl: silent.url, privateApiUrl: silent.url, readTimeout: "200 millis" }))
  const admin = async (path: string, body: unknown) => {
    const response = await emptyStore.handler(new Request(`http://cairn${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${TestRuntime.adminToken}` },
      body: JSON.stringify(body)
    }))
    return ((await response.json()) as { data: Record<string, string> }).data
  }
  const workspace = await admin("/admin/workspaces", { name: "W", plan: "pro", agentLimit: 1, internal: false })
  const { token } = await admin("/admin/keys", { workspaceId: workspace["id"], userId: "ada", scopes: ["org:files:write"] })
  const form = new FormData()
  form.append("file", new File(["published, then lost\n"], "lost.txt", { type: "text/plain" }))
  form.append("network", "public")
  const uploaded = await emptyStore.handler(new Request("http://cairn/v3/files", { method: "POST", headers: { authorization: `Bearer ${token}` }, body: form }))
  assert.strictEqual(uploaded.status, 200, await uploaded.clone().text())
  cid = ((await uploaded.json()) as { data: { cid: string } }).data.cid
}, 120_000)

afterAll(async () => {
  await emptyStore.dispose()
  await stuckKubo.dispose()
  await runtime.dispose()
  silent.server.closeAllConnections()
  await new Promise((resolve) => silent.server.close(resolve))
})

const get = (web: ReturnType<typeof routesWith>, path: string, headers: Record<string, string> = {}) =>
  web.handler(new Request(`http://cairn${path}`, { headers }))

describe("the gateway, for published content its store does not hold", () => {
  it("answers 404 Content not found as a file, a raw block and a CAR", async () => {
    for (const [path, headers] of [
      [`/ipfs/${cid}`, {}],
      [`/ipfs/${cid}?format=raw`, {}],
      [`/ipfs/${cid}`, { accept: "application/vnd.ipld.car" }]
    ] as const) {
      const response = await get(emptyStore, path, headers)
      assert.strictEqual(response.status, 404, `${path} ${JSON.stringify(headers)}`)
      assert.deepStrictEqual(await response.json(), { error: "Content not found" })
    }
  })

  it("answers 504 Content store timed out when Kubo does not answer", async () => {
    const response = await get(stuckKubo, `/ipfs/${cid}`)
    assert.strictEqual(response.status, 504)
    assert.deepStrictEqual(await response.json(), { error: "Content store timed out" })
    assert.isTrue(logged.some((line) => line.includes(`did not answer block/stat ${cid} within 200 ms`)), logged.join("\n"))
  })
})
