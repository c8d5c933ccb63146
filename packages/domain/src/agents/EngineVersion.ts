/**
 * The order of engine versions. OpenClaw uses CalVer (`2026.3.8`, betas as `2026.3.8-beta.1`), and a downgrade check
 * must compare those numerically: as strings, `2026.10.1` would sort before `2026.9.1`.
 */
import { Order } from "effect"

interface Parsed {
  readonly release: ReadonlyArray<number>
  /** Dot-separated identifiers after `-`; empty for a release, which follows all of its pre-releases. */
  readonly pre: ReadonlyArray<string>
}

const parse = (version: string): Parsed => {
  const dash = version.indexOf("-")
  const core = dash === -1 ? version : version.slice(0, dash)
  const pre = dash === -1 ? [] : version.slice(dash + 1).split(".")
  return { release: core.split(".").map((part) => Number.parseInt(part, 10) || 0), pre }
}

const numeric = /^\d+$/

const compareIdentifiers = (a: string, b: string): -1 | 0 | 1 => {
  const aNumeric = numeric.test(a)
  const bNumeric = numeric.test(b)
  if (aNumeric && bNumeric) return Order.Number(Number(a), Number(b))
  // As in SemVer, numeric identifiers sort before alphanumeric ones.
  if (aNumeric !== bNumeric) return aNumeric ? -1 : 1
  return Order.String(a, b)
}

/** Oldest first: numeric parts compared as numbers, a missing part counts as 0, pre-releases before the release. */
export const order: Order.Order<string> = (a, b) => {
  const x = parse(a)
  const y = parse(b)
  for (let i = 0; i < Math.max(x.release.length, y.release.length); i++) {
    const byPart = Order.Number(x.release[i] ?? 0, y.release[i] ?? 0)
    if (byPart !== 0) return byPart
  }
  if (x.pre.length === 0 || y.pre.length === 0) return Order.Number(y.pre.length, x.pre.length)
  for (let i = 0; i < Math.min(x.pre.length, y.pre.length); i++) {
    const byIdentifier = compareIdentifiers(x.pre[i]!, y.pre[i]!)
    if (byIdentifier !== 0) return byIdentifier
  }
  return Order.Number(x.pre.length, y.pre.length)
}

/** Whether `version` is older than `than`. */
export const isOlder = (version: string, than: string): boolean => order(version, than) < 0

/** Whether `version` is a pre-release (`2026.3.8-beta.1`). */
export const isPreRelease = (version: string): boolean => version.includes("-")

/** The newest of `offered` that is a release (the newest of all when none is); undefined when `offered` is empty. */
export const latestRelease = (offered: ReadonlyArray<string>): string | undefined => {
  const sorted = [...offered].sort(order)
  return sorted.filter((version) => !isPreRelease(version)).at(-1) ?? sorted.at(-1)
}

/**
 * The version an update `tag` names among `offered`: `latest` the newest release, `beta` the newest of all
 * (pre-releases too), anything else itself when offered; undefined when it names none.
 */
export const resolveTag = (tag: string, offered: ReadonlyArray<string>): string | undefined => {
  if (tag === "latest") return latestRelease(offered)
  if (tag === "beta") return [...offered].sort(order).at(-1)
  return offered.includes(tag) ? tag : undefined
}
