/**
 * How long installing an OpenClaw version takes (`cairn_engine_install_duration_seconds`, in Effect's `Metric`
 * registry, served on `/metrics`): the npm install of the engine itself, once per version and node. Minutes here
 * are what a user waits for before a first agent on a new version runs.
 */
import { Metric } from "effect"

export const installDuration = Metric.histogram("cairn_engine_install_duration_seconds", {
  description: "Time to install an engine version from the npm registry",
  boundaries: Metric.boundariesFromIterable([5, 10, 20, 30, 45, 60, 90, 120, 180, 300, 600, 900]),
  attributes: { engine: "openclaw" }
})
