/**
 * Counters about agents' gateways, in Effect's `Metric` registry (served on `/metrics`):
 * `cairn_gateway_restarts_total`, the restarts the supervisor makes of gateways that crashed (`reason="crash"`).
 * A rising rate is a crash loop; the agent's history says which agent and why.
 */
import { Metric } from "effect"

export const restarts = Metric.counter("cairn_gateway_restarts_total", {
  description: "Gateways restarted by the supervisor after a crash",
  attributes: { reason: "crash" },
  incremental: true
})
