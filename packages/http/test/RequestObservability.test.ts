import { RequestId } from "@cairn/http"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Logger, Metric, References } from "effect"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import * as RequestObservability from "../src/RequestObservability.ts"

interface Line {
  readonly message: unknown
  readonly requestId: unknown
}

const lines: Array<Line> = []
const capture = Logger.make<unknown, void>(({ fiber, message }) => {
  lines.push({ message: Array.isArray(message) ? message[0] : message, requestId: fiber.getRef(References.CurrentLogAnnotations)["requestId"] })
})

const registry = new Map()

// A route that logs in its own fiber and in one it forks, as handlers and services do.
const routes = Layer.mergeAll(
  HttpRouter.add("GET", "/things/:id", Effect.gen(function*() {
    yield* Effect.logInfo("handling a thing")
    yield* Effect.forkChild(Effect.logInfo("in a child fiber")).pipe(Effect.flatMap(Fiber.join))
    return HttpServerResponse.text("ok")
  })),
  HttpRouter.add("GET", "/boom", Effect.die("a defect"))
).pipe(Layer.provideMerge(RequestObservability.layer))

const web = HttpRouter.toWebHandler(
  routes.pipe(
    Layer.provide(HttpServer.layerServices),
    // Merged, so the requests' fibers get them too.
    Layer.provideMerge(Logger.layer([capture])),
    Layer.provideMerge(Layer.succeed(Metric.MetricRegistry, registry))
  ),
  { disableLogger: true }
)

afterAll(() => web.dispose())

const get = (path: string, headers: Record<string, string> = {}) => web.handler(new Request(`http://cairn${path}`, { headers }))

describe("every request", () => {
  it("keeps a valid incoming x-request-id, on every log line of the request and in the response", async () => {
    lines.length = 0
    const response = await get("/things/1", { "x-request-id": "edge-1234.abc:def_9" })
    assert.strictEqual(response.status, 200)
    assert.strictEqual(response.headers.get("x-request-id"), "edge-1234.abc:def_9")
    assert.deepStrictEqual(lines, [
      { message: "handling a thing", requestId: "edge-1234.abc:def_9" },
      { message: "in a child fiber", requestId: "edge-1234.abc:def_9" }
    ])
  })

  it("gets a new id when it brings none, or one that is too long or holds unsafe characters", async () => {
    for (const incoming of [undefined, "x".repeat(129), "a b", "id\"<script>", ""]) {
      lines.length = 0
      const response = await get("/things/2", incoming === undefined ? {} : { "x-request-id": incoming })
      const id = response.headers.get("x-request-id")!
      assert.match(id, /^[0-9a-f-]{36}$/, `incoming ${JSON.stringify(incoming)}`)
      assert.deepStrictEqual(lines.map((line) => line.requestId), [id, id])
    }
  })

  it("has an id on answers no route gives: an unknown path, a defect", async () => {
    const missing = await get("/nowhere", { "x-request-id": "lost-1" })
    assert.strictEqual(missing.status, 404)
    assert.strictEqual(missing.headers.get("x-request-id"), "lost-1")
    lines.length = 0
    const failed = await get("/boom", { "x-request-id": "boom-1" })
    assert.strictEqual(failed.status, 500)
    assert.strictEqual(failed.headers.get("x-request-id"), "boom-1")
  })

  it("is timed under its route's pattern, never its raw URL", async () => {
    await get("/things/abc")
    await get("/things/def")
    await get("/nowhere/else")
    const series = Array.from(registry.values() as Iterable<{ id: string; attributes: Record<string, string> }>)
      .filter((metric) => metric.id === "http_request_duration_seconds")
      .map((metric) => `${metric.attributes["method"]} ${metric.attributes["route"]} ${metric.attributes["status"]}`)
    assert.includeMembers(series, ["GET /things/:id 200", "GET unmatched 404", "GET /boom 500"])
    assert.isFalse(series.some((s) => s.includes("abc") || s.includes("/nowhere")), series.join("\n"))
  })
})

describe("RequestId.parse", () => {
  it("accepts short ids of safe characters only", () => {
    assert.strictEqual(RequestId.parse("0f8fad5b-d9cb-469f-a165-70867728950e"), "0f8fad5b-d9cb-469f-a165-70867728950e")
    assert.strictEqual(RequestId.parse("x".repeat(128)), "x".repeat(128))
    assert.isUndefined(RequestId.parse("x".repeat(129)))
    assert.isUndefined(RequestId.parse("a\nb"))
    assert.isUndefined(RequestId.parse(undefined))
  })
})
