/**
 * Counters about agents' gateways, in Effect's `Metric` registry (served on `/metrics`):
 * `cairn_gateway_restarts_total`, the restarts the supervisor makes of gateways that crashed (`reason="crash"`).
 * A rising rate is a crash loop; the agent's history says which agent and why.
 * `cairn_agent_sleeps_total` and `cairn_agent_wake_duration_seconds`: agents put to sleep when idle, and how long a
 * wake took from the request (or the task falling due) to a running gateway, by what woke it and how it ended.
 */
import { Metric } from "effect"

export const restarts = Metric.counter("cairn_gateway_restarts_total", {
  description: "Gateways restarted by the supervisor after a crash",
  attributes: { reason: "crash" },
  incremental: true
})

export const sleeps = Metric.counter("cairn_agent_sleeps_total", {
  description: "Agents put to sleep after being idle",
  incremental: true
})

const wakeBoundaries = Metric.boundariesFromIterable([0.25, 0.5, 1, 2, 3, 5, 8, 13, 20, 30, 60, 120])

const wakeDurations = new Map<string, ReturnType<typeof wakeHistogram>>()
const wakeHistogram = (reason: string, outcome: "running" | "failed") =>
  Metric.histogram("cairn_agent_wake_duration_seconds", {
    description: "Time from a sleeping agent's wake to its running gateway",
    boundaries: wakeBoundaries,
    attributes: { reason, outcome }
  })

/** The wake latency histogram for one cause and outcome (built once for each). */
export const wakeDuration = (reason: string, outcome: "running" | "failed") => {
  const key = `${reason}:${outcome}`
  let histogram = wakeDurations.get(key)
  if (histogram === undefined) wakeDurations.set(key, histogram = wakeHistogram(reason, outcome))
  return histogram
}
