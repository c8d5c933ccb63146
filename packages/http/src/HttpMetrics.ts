/**
 * How long Cairn takes to answer, per route: one Prometheus histogram, `http_request_duration_seconds`, labelled
 * with the method, the route's pattern (`/v3/files/:network/signature/:cid`, never the raw URL, so the number of
 * series stays bounded by the routes Cairn serves) and the status. Requests no route matched share the route label
 * `unmatched`. Each label set gets its own histogram once, so recording a request is a map lookup and a bucket
 * search, with no allocation after the first request of a kind.
 */
import type { Context } from "effect"
import { Metric } from "effect"

export const name = "http_request_duration_seconds"

/** From 1 ms (a cached GET) to 10 s (a large upload); slower requests are counted under `+Inf`. */
export const boundaries = Metric.boundariesFromIterable([0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10])

const description = "Time from a request's arrival to its response's headers, by method, route pattern and status"

/** The methods Cairn serves; anything else is labelled `other`, so a client cannot mint series. */
const methods = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])

const histograms = new Map<string, Metric.Metric<number, unknown>>()

const histogramFor = (method: string, route: string, status: number) => {
  const key = `${method} ${status} ${route}`
  let histogram = histograms.get(key)
  if (histogram === undefined) {
    histogram = Metric.histogram(name, { description, boundaries, attributes: { method, route, status: String(status) } })
    histograms.set(key, histogram)
  }
  return histogram
}

/** Records one answered request; `route` is the matched pattern, or `undefined` when no route matched. */
export const record = (
  context: Context.Context<never>,
  method: string,
  route: string | undefined,
  status: number,
  seconds: number
): void =>
  histogramFor(methods.has(method) ? method : "other", route ?? "unmatched", status).updateUnsafe(seconds, context)
