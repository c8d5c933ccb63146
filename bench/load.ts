/**
 * The load generator for bench:http, run as its own process (as wrk would be) so it does not share an event loop
 * with the servers it measures. Reads a spec file, runs autocannon, prints the result as one JSON line.
 */
import autocannon from "autocannon"
import { readFileSync } from "node:fs"
import type { LoadSpec } from "./LoadSpec.ts"

const spec = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as LoadSpec
let next = 0
const started = performance.now()
const result = await autocannon({
  url: spec.url,
  connections: 10,
  timeout: 10,
  ...(spec.amount === undefined ? { duration: spec.seconds ?? 5 } : { amount: spec.amount }),
  requests: [{
    method: spec.method,
    setupRequest: (request: autocannon.Request) => {
      const item = spec.items[next++ % spec.items.length]!
      return { ...request, path: item.path, headers: spec.headers, ...(item.body === undefined ? {} : { body: item.body }) }
    }
  }]
})
const seconds = (performance.now() - started) / 1000
console.log(JSON.stringify({
  // Completed requests over the run's wall time, timed here: autocannon's own figures are per whole second.
  rps: Math.round(result.requests.total / seconds),
  p99: result.latency.p99,
  total: result.requests.total,
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts
}))
