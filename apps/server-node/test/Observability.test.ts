/**
 * What an operator sees of a running server, end to end: JSON log lines carrying the request id the response
 * echoes; `/metrics`, behind METRICS_TOKEN, in a text format a Prometheus parser reads, with the series the
 * operations guide lists; and the request's trace span, received by an OTLP collector on loopback (a plain
 * `node:http` server standing in for the OpenTelemetry Collector).
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import parsePrometheusTextFormat from "parse-prometheus-text-format"
import { newApiUser, type ServerProcess, startServer, waitUntilServing } from "../src/testing/index.ts"

const dataDir = mkdtempSync(join(tmpdir(), "cairn-observability-"))
const metricsToken = `metrics-${crypto.randomUUID()}`
const requestId = `obs-${crypto.randomUUID()}`

/** The trace exports the collector received: content type and raw body. */
const exports: Array<{ readonly contentType: string | undefined; readonly body: Buffer }> = []
let onExport = () => {}
let collector: Server
let server: ServerProcess

beforeAll(async () => {
  collector = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      if (request.method === "POST" && request.url === "/v1/traces") {
        exports.push({ contentType: request.headers["content-type"], body: Buffer.concat(chunks) })
        onExport()
      }
      response.writeHead(200, { "content-type": "application/x-protobuf" }).end()
    })
  })
  await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve))
  const { port } = collector.address() as AddressInfo
  server = await startServer({
    DATA_DIR: dataDir,
    DATABASE_URL: undefined,
    ENGINE: "simulated",
    LOG_FORMAT: "json",
    ACCESS_LOG: "true",
    METRICS_TOKEN: metricsToken,
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: undefined,
    OTEL_BSP_SCHEDULE_DELAY: "100",
    OTEL_SERVICE_NAME: "cairn-observability-test"
  })
  await waitUntilServing(server)
}, 120_000)

afterAll(async () => {
  server?.child.kill("SIGTERM")
  await server?.exited
  collector?.close()
  rmSync(dataDir, { recursive: true, force: true })
})

/** Resolves once an export holds `needle` (OTLP protobuf keeps strings as their UTF-8 bytes). */
const exportHolding = (needle: string) =>
  new Promise<{ readonly contentType: string | undefined; readonly body: Buffer }>((resolve) => {
    const check = () => {
      const found = exports.find((e) => e.body.includes(needle))
      if (found !== undefined) resolve(found)
    }
    onExport = check
    check()
  })

interface Family {
  readonly name: string
  readonly type: string
  readonly metrics: ReadonlyArray<{ readonly labels?: Record<string, string>; readonly value?: string; readonly count?: string }>
}

describe("a running server", () => {
  it("ties a request's log lines, response and trace together with one request id", async () => {
    const user = newApiUser({ url: server.url, dataDir }, { workspace: "Observed", scopes: "org:files:read" })
    const response = await fetch(`${server.url}/v3/files/public`, {
      headers: { authorization: `Bearer ${user.token}`, "x-request-id": requestId }
    })
    assert.strictEqual(response.status, 200)
    assert.strictEqual(response.headers.get("x-request-id"), requestId)

    // LOG_FORMAT=json: the access-log line is a JSON object with the id among its annotations.
    const lines = server.output().split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line))
    const mine = lines.filter((line) => line.annotations?.requestId === requestId)
    assert.lengthOf(mine, 1, server.output().slice(-4_000))
    assert.strictEqual(mine[0].message, "Sent HTTP response")
    assert.strictEqual(mine[0].annotations["http.route"], "/v3/files/:network")
    assert.strictEqual(mine[0].annotations["http.status"], 200)
    assert.strictEqual(mine[0].level, "INFO")

    // The request's server span reaches the collector, with the route's pattern and the request id.
    const exported = await exportHolding(requestId)
    assert.strictEqual(exported.contentType, "application/x-protobuf")
    assert.isTrue(exported.body.includes("http.route"), "the route attribute")
    assert.isTrue(exported.body.includes("/v3/files/:network"), "the route's pattern")
    assert.isTrue(exported.body.includes("http.request.id"), "the request id attribute")
    assert.isTrue(exported.body.includes("cairn-observability-test"), "the service name")
  })

  it("serves /metrics only with METRICS_TOKEN, in the Prometheus text format, with the documented series", async () => {
    assert.strictEqual((await fetch(`${server.url}/metrics`)).status, 401)
    assert.strictEqual((await fetch(`${server.url}/metrics`, { headers: { authorization: "Bearer wrong" } })).status, 401)
    await fetch(`${server.url}/v3/files/public/nope-${crypto.randomUUID()}`) // a 401 under its route's pattern
    // Answers made before any route runs carry the id too: a path refused for its NUL byte, an unknown path.
    for (const path of ["/v3/files/public/%00", "/no-such-route"]) {
      const refused = await fetch(`${server.url}${path}`, { headers: { "x-request-id": "refused-1" } })
      assert.include([400, 404], refused.status, path)
      assert.strictEqual(refused.headers.get("x-request-id"), "refused-1", path)
    }

    const response = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })
    assert.strictEqual(response.status, 200)
    assert.match(response.headers.get("content-type")!, /^text\/plain; version=0\.0\.4/)
    const text = await response.text()
    const families = parsePrometheusTextFormat(text) as ReadonlyArray<Family>
    const family = (name: string, type: string) => {
      const found = families.find((f) => f.name === name)
      assert.isDefined(found, `${name} in ${families.map((f) => f.name).join(", ")}`)
      assert.strictEqual(found!.type, type.toUpperCase(), name)
      return found!
    }

    // The parser folds a histogram's labelled series into one: their labels are read from the `_count` lines.
    const counts = (name: string) =>
      Array.from(text.matchAll(new RegExp(`^${name}_count\\{(.*)\\} (\\S+)$`, "gm")), ([, labels, count]) => ({
        labels: Object.fromEntries(Array.from(labels!.matchAll(/(\w+)="([^"]*)"/g), ([, key, value]) => [key!, value!])),
        count: Number(count)
      }))
    family("http_request_duration_seconds", "histogram")
    const routes = counts("http_request_duration_seconds").map(({ labels }) => `${labels["method"]} ${labels["route"]} ${labels["status"]}`)
    assert.includeMembers(routes, ["GET /v3/files/:network 200", "GET /v3/files/:network/:id 401", "GET /healthz 200"])
    assert.isFalse(routes.some((route) => route.includes("nope-") || route.includes("public")), "raw URLs never become labels")

    family("cairn_event_store_append_duration_seconds", "histogram")
    const appended = counts("cairn_event_store_append_duration_seconds").find(({ labels }) => labels["outcome"] === "ok")
    assert.isAbove(appended!.count, 0, "the workspace and key were appended")
    const lag = family("cairn_projection_lag_events", "gauge")
    assert.deepStrictEqual(lag.metrics.map((m) => m.labels!["projection"]), ["category-stats"])
    assert.isAtLeast(Number(lag.metrics[0]!.value), 0)
    const agents = family("cairn_agents", "gauge")
    assert.sameMembers(agents.metrics.map((m) => m.labels!["state"]), ["starting", "running", "not_running", "sleeping"])
    family("cairn_gateway_restarts_total", "counter")
    family("cairn_engine_install_duration_seconds", "histogram")
  })
})
