/**
 * An agent gateway's log, as the API shows it: entries `{timestamp, level, source, message}` (the shape of Pinata's
 * log stream), read in stretches that end at a cursor, so that a follower asks only for what came after. OpenClaw
 * writes its log as JSON lines (tslog: the message in `"0"`, `"1"`, …, the level and time in `_meta`); any other line
 * is a plain message. Secret values the engine knows (the agent's environment, its gateway token) are replaced before
 * a line is parsed, so no entry ever holds one.
 */

export interface LogEntry {
  readonly timestamp: string | null
  readonly level: string | null
  /** The subsystem that wrote it (`gateway`, `cron`, a channel, …), where the line says. */
  readonly source: string | null
  readonly message: string
}

/** A stretch of the log: its entries, and the cursor to read on from. */
export interface LogChunk {
  readonly entries: ReadonlyArray<LogEntry>
  /** Opaque to callers: give it back as `after` to get what was written since. */
  readonly cursor: number
}

/** The last `lines` lines, or what was written after `after` (a cursor of an earlier chunk). */
export type LogRequest = { readonly lines: number } | { readonly after: number }

/** The most lines one read gives. */
export const maxLogLines = 1000

/** Where a secret value stood in a log line. */
export const redactedMark = "[redacted]"

/** Values shorter than this are not looked for: they would mark ordinary words, and no real credential is that short. */
const shortestSecret = 4

/** Replaces every occurrence of each secret value in `text`. */
export const redactor = (secrets: ReadonlyArray<string>) => {
  const values = [...new Set(secrets.filter((value) => value.length >= shortestSecret))].sort((a, b) => b.length - a.length)
  return (text: string) => values.reduce((line, value) => line.split(value).join(redactedMark), text)
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** tslog names a logger with JSON (`{"subsystem":"gateway"}`) or a plain name. */
const sourceOf = (name: unknown): string | null => {
  if (typeof name !== "string" || name === "") return null
  if (!name.trimStart().startsWith("{")) return name
  try {
    const parsed: unknown = JSON.parse(name)
    if (!isRecord(parsed)) return null
    const source = parsed["subsystem"] ?? parsed["module"] ?? parsed["plugin"]
    return typeof source === "string" ? source : null
  } catch {
    return null
  }
}

const text = (value: unknown) => typeof value === "string" ? value : JSON.stringify(value)

/** One line of the log file as an entry. */
export const parseLogLine = (line: string): LogEntry => {
  const plain = { timestamp: null, level: null, source: null, message: line }
  if (!line.startsWith("{")) return plain
  let parsed: unknown
  try {
    parsed = JSON.parse(line)
  } catch {
    return plain
  }
  if (!isRecord(parsed)) return plain
  const meta = isRecord(parsed["_meta"]) ? parsed["_meta"] : {}
  const time = parsed["time"] ?? meta["date"]
  const level = meta["logLevelName"] ?? parsed["level"]
  // The first argument may be the logger's bindings (`{"subsystem":…}`), the rest the message.
  const numbered = Object.keys(parsed).filter((key) => /^\d+$/.test(key)).sort((a, b) => Number(a) - Number(b)).map((key) => parsed[key])
  const bindings = sourceOf(numbered[0])
  const parts = bindings !== null && numbered.length > 1 ? numbered.slice(1) : numbered
  const message = typeof parsed["message"] === "string" ? parsed["message"] : parts.map(text).join(" ")
  return {
    timestamp: typeof time === "string" ? time : null,
    level: typeof level === "string" ? level.toLowerCase() : null,
    source: sourceOf(meta["name"]) ?? bindings ?? (typeof parsed["subsystem"] === "string" ? parsed["subsystem"] : null),
    message
  }
}

/** An entry as one line of text: `<timestamp> <LEVEL> [source] message`, leaving out what it does not have. */
export const formatEntry = (entry: LogEntry) =>
  [entry.timestamp, entry.level?.toUpperCase(), entry.source === null ? null : `[${entry.source}]`, entry.message]
    .filter((part) => part !== null && part !== undefined).join(" ")
