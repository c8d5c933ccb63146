/**
 * Which workspace paths snapshots leave out: dependencies and caches that are rebuilt, not authored, and files
 * OpenClaw's own backup drops (reference features §9). Patterns are globs (picomatch, dot files included): one
 * without a `/` matches a file or directory name anywhere (`node_modules`), one with a `/` matches the whole path
 * from the workspace root (`skills/*\/cache`). An excluded directory is not descended into, nor touched by a reset.
 */
import picomatch from "picomatch/posix.js"
import { Result } from "effect"
import { ValidationFailed } from "../ValidationFailed.ts"

export const defaultExclusions: ReadonlyArray<string> = [
  "node_modules",
  ".cache",
  ".npm",
  "__pycache__",
  "*.sock",
  "*.pid",
  "*.tmp",
  "*.tmp.*"
]

/** A predicate on relative `/`-separated paths: true for an excluded one. */
export const matcher = (patterns: ReadonlyArray<string>): ((path: string) => boolean) => {
  const names = patterns.filter((p) => !p.includes("/"))
  const paths = patterns.filter((p) => p.includes("/"))
  const byName = names.length === 0 ? () => false : picomatch(names, { dot: true, basename: true })
  const byPath = paths.length === 0 ? () => false : picomatch(paths, { dot: true })
  return (path) => byName(path) || byPath(path)
}

/** Patterns from a comma-separated setting (SNAPSHOT_EXCLUDE); empty items are dropped, absolute ones refused. */
export const parsePatterns = (setting: string): Result.Result<ReadonlyArray<string>, ValidationFailed> => {
  const patterns = setting.split(",").map((p) => p.trim()).filter((p) => p !== "")
  const absolute = patterns.find((p) => p.startsWith("/"))
  return absolute === undefined
    ? Result.succeed(patterns)
    : Result.fail(new ValidationFailed({ detail: `exclusion ${JSON.stringify(absolute)} must be relative to the workspace` }))
}
