import { EventStore, EventStoreUnavailable, MemoryEventStore } from "@cairn/event-store"
import { HealthRoutes, RouteCatalog } from "@cairn/http"
import { TestLogs } from "@cairn/runtime/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"

const handlerWith = (store: Layer.Layer<EventStore>) =>
  HttpRouter.toWebHandler(Layer.merge(HealthRoutes.layer.pipe(Layer.provide(store), Layer.provide(RouteCatalog.layer), Layer.provide(HttpServer.layerServices)), TestLogs.layer), {
    disableLogger: true
  })

const healthy = handlerWith(Layer.orDie(MemoryEventStore.layer()))
const unreachable = handlerWith(Layer.effect(EventStore, Effect.map(Effect.orDie(MemoryEventStore.make()), (store) =>
  EventStore.of({ ...store, ping: Effect.fail(new EventStoreUnavailable({ operation: "ping", retryable: true, cause: new Error("connection refused") })) }))))

afterAll(async () => {
  await healthy.dispose()
  await unreachable.dispose()
})

describe("health routes", () => {
  it("answer ready while the event store answers", async () => {
    const response = await healthy.handler(new Request("http://cairn/readyz"))
    assert.strictEqual(response.status, 200)
    assert.deepStrictEqual(await response.json(), { status: "ready" })
  })

  it("answer 503 on /readyz, but stay live on /healthz, while the event store is unreachable", async () => {
    const ready = await unreachable.handler(new Request("http://cairn/readyz"))
    assert.strictEqual(ready.status, 503)
    assert.deepStrictEqual(await ready.json(), { status: "unavailable", reason: "event store unreachable" })
    assert.strictEqual((await unreachable.handler(new Request("http://cairn/healthz"))).status, 200)
  })
})
