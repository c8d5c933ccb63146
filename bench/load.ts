/**
 * The load generator for the HTTP benchmarks, run as its own process (as wrk would be) so it does not share an
 * event loop with the servers it measures. Given a spec file, it runs autocannon once and prints the result as one
 * JSON line; given none, it serves: each JSON spec line on stdin is one run, answered by one result line on stdout
 * (bench/LoadGenerator.ts), so paired blocks do not pay a process start each.
 */
import autocannon from "autocannon"
import { readFileSync } from "node:fs"
import { createInterface } from "node:readline"
import type { LoadResult, LoadSpec } from "./LoadSpec.ts"

const run = async (spec: LoadSpec): Promise<LoadResult> => {
  let next = 0
  let lastResponse = 0
  const started = performance.now()
  const options: autocannon.Options = {
    url: spec.url,
    connections: 10,
    timeout: 10,
    // An `amount` run ends on autocannon's next sample tick after the last response: sample often, so the next block
    // is not kept waiting (the run's rate is timed to its last response below, not to the tick).
    ...(spec.amount === undefined ? { duration: spec.seconds ?? 5 } : { amount: spec.amount, sampleInt: 20 }),
    requests: [{
      method: spec.method,
      setupRequest: (request: autocannon.Request) => {
        const item = spec.items[next++ % spec.items.length]!
        return { ...request, path: item.path, headers: spec.headers, ...(item.body === undefined ? {} : { body: item.body }) }
      }
    }]
  }
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(options, (error, result) => error ? reject(error) : resolve(result))
    instance.on("response", () => {
      lastResponse = performance.now()
    })
  })
  const seconds = ((spec.amount === undefined ? performance.now() : lastResponse) - started) / 1000
  return {
    // Completed requests over the run's wall time, timed here: autocannon's own figures are per whole sample.
    rps: Math.round(result.requests.total / seconds),
    p99: result.latency.p99,
    total: result.requests.total,
    sent: result.requests.sent,
    seconds,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts
  }
}

if (process.argv[2] !== undefined) {
  console.log(JSON.stringify(await run(JSON.parse(readFileSync(process.argv[2], "utf8")) as LoadSpec)))
} else {
  for await (const line of createInterface({ input: process.stdin })) {
    if (line.trim() !== "") process.stdout.write(`${JSON.stringify(await run(JSON.parse(line) as LoadSpec))}\n`)
  }
}
