/**
 * What `/metrics` reads before a scrape (src/Observability.ts), over the test runtime's database and simulated
 * engine: the per-agent limits the engine reports (decision 0042) are gauges by resource; the data directory's free
 * bytes and the disk reserve are gauges too.
 */
import { MetricsRoutes } from "@cairn/http"
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { PrometheusMetrics } from "effect/observability"
import * as Observability from "../src/Observability.ts"
import { TestRuntime } from "../src/testing/index.ts"

layer(Observability.layerMetrics.pipe(Layer.provideMerge(TestRuntime.layerTest())), { excludeTestServices: true, timeout: "60 seconds" })(
  "metrics before a scrape",
  (it) => {
    it.effect("show the agents' limits on this node, by resource", () =>
      Effect.gen(function*() {
        yield* yield* MetricsRoutes.BeforeScrape
        const text = yield* PrometheusMetrics.format()
        // The simulated engine reports Cairn's defaults: 4 GiB, 1 CPU, 512 processes, 10 GiB of disk.
        assert.match(text, /^cairn_agent_limit\{resource="memory_bytes"\} 4294967296$/m, text)
        assert.match(text, /^cairn_agent_limit\{resource="cpus"\} 1$/m)
        assert.match(text, /^cairn_agent_limit\{resource="pids"\} 512$/m)
        assert.match(text, /^cairn_agent_limit\{resource="disk_bytes"\} 10737418240$/m)
      }))

    it.effect("show the data directory's free bytes and the reserve kept on its disk", () =>
      Effect.gen(function*() {
        yield* yield* MetricsRoutes.BeforeScrape
        const text = yield* PrometheusMetrics.format()
        // The test runtime's disk has 1 TiB free; the reserve is the default 1 GiB.
        assert.match(text, /^cairn_disk_free_bytes 1099511627776$/m, text)
        assert.match(text, /^cairn_disk_reserve_bytes 1073741824$/m)
      }))
  }
)
