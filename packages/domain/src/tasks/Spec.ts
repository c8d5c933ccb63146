/**
 * The rules on scheduled tasks as users send them (Pinata's task body, service interface: "name, schedule, payload
 * all required and well-formed"), checked before the engine is asked, so a malformed task is 400 `Invalid
 * parameters` with a `reason`, never an engine failure:
 * - `name`: a non-empty string (trimmed), at most 200 characters; `description` at most 2000.
 * - `schedule`: `{kind:"cron", expr, tz?}` (parsed with croner, the parser OpenClaw's scheduler uses; `tz` an IANA
 *   time zone; it must fire again, and at most once a minute), `{kind:"every", everyMs, staggerMs?}` (`everyMs` a
 *   whole number of milliseconds, at least 60000: Pinata's minimum interval of one minute), or `{kind:"at", at}` (an
 *   ISO 8601 date-time in the future; without an offset it is UTC, as OpenClaw reads it; sent on as UTC).
 * - `payload`: `{kind:"agentTurn", text, model?, thinking?, timeoutSeconds?}` or `{kind:"systemEvent", message}`.
 *   A task on the `main` session takes a system event, an `isolated` one an agent turn (the engine refuses others).
 * - `sessionTarget` `main|isolated`, `wakeMode` `now|next-heartbeat`, `enabled` a boolean, `delivery`
 *   `{mode: none|announce|webhook, channel?, to?, bestEffort?}` (a webhook needs an http(s) URL in `to`).
 * An optional field given as `null` counts as absent. Fields the rules do not know are dropped.
 */
import { Cron } from "croner"
import { Result, Schema } from "effect"
import { ValidationFailed } from "../ValidationFailed.ts"
import { InvalidParameters } from "./Errors.ts"

/** User tasks per agent (Pinata's limit); the engine's own jobs do not count. */
export const MaxPerAgent = 20
/** The shortest interval between two runs (Pinata: one minute). */
export const MinIntervalMs = 60_000
export const MaxNameLength = 200
export const MaxDescriptionLength = 2000
/** The longest an agent turn may be given. */
export const MaxTimeoutSeconds = 86_400
/** How many runs `GET …/runs` returns without `limit`, and at most. */
export const DefaultRuns = 20
export const MaxRuns = 100

export const Schedule = Schema.Union([
  Schema.Struct({ kind: Schema.Literal("cron"), expr: Schema.String, tz: Schema.optionalKey(Schema.String) }),
  Schema.Struct({ kind: Schema.Literal("every"), everyMs: Schema.Number, staggerMs: Schema.optionalKey(Schema.Number) }),
  Schema.Struct({ kind: Schema.Literal("at"), at: Schema.String })
])
export type Schedule = typeof Schedule.Type

export type Payload =
  | {
    readonly kind: "agentTurn"
    readonly text: string
    readonly model?: string
    readonly thinking?: string
    readonly timeoutSeconds?: number
  }
  | { readonly kind: "systemEvent"; readonly message: string }

export interface Delivery {
  readonly mode: "none" | "announce" | "webhook"
  readonly channel?: string
  readonly to?: string
  readonly bestEffort?: boolean
}

export type SessionTarget = "main" | "isolated"
export type WakeMode = "now" | "next-heartbeat"

/** A task as a user creates it, checked. */
export interface Spec {
  readonly name: string
  readonly description?: string
  readonly enabled?: boolean
  readonly schedule: Schedule
  readonly sessionTarget?: SessionTarget
  readonly wakeMode?: WakeMode
  readonly payload: Payload
  readonly delivery?: Delivery
}

/** A change to a task: the fields given replace the stored ones. */
export type Patch = Partial<Spec>

/** The field names a patch may carry, in the order they are reported. */
export const patchFields = ["name", "description", "enabled", "schedule", "sessionTarget", "wakeMode", "payload", "delivery"] as const

/** The task a patch changes, as far as the rules that span fields need it. */
export interface Current {
  readonly sessionTarget?: string | undefined
  readonly payload: { readonly kind: string }
}

// The checks below throw Refused, caught once in `checked`: every exported function is total.
class Refused {
  readonly reason: string
  constructor(reason: string) {
    this.reason = reason
  }
}
const refuse = (reason: string): never => {
  throw new Refused(reason)
}
const checked = <A>(f: () => A): Result.Result<A, InvalidParameters> => {
  try {
    return Result.succeed(f())
  } catch (error) {
    if (error instanceof Refused) return Result.fail(new InvalidParameters({ reason: error.reason }))
    throw error
  }
}

type Fields = Readonly<Record<string, unknown>>

const isRecord = (value: unknown): value is Fields => typeof value === "object" && value !== null && !Array.isArray(value)
const present = (value: unknown) => value !== undefined && value !== null

const record = (value: unknown, field: string): Fields =>
  present(value) ? (isRecord(value) ? value : refuse(`${field} must be an object`)) : refuse(`${field} is required`)

const text = (value: unknown, field: string, max?: number): string => {
  if (!present(value)) return refuse(`${field} is required`)
  if (typeof value !== "string") return refuse(`${field} must be a string`)
  const trimmed = value.trim()
  if (trimmed === "") return refuse(`${field} must not be empty`)
  if (max !== undefined && trimmed.length > max) return refuse(`${field} must be at most ${max} characters`)
  return trimmed
}

const oneOf = <const L extends ReadonlyArray<string>>(value: unknown, field: string, allowed: L): L[number] =>
  typeof value === "string" && allowed.includes(value) ? value : refuse(`${field} must be one of ${allowed.join(", ")}`)

const integer = (value: unknown, field: string, min: number, max = Number.MAX_SAFE_INTEGER): number =>
  typeof value === "number" && Number.isInteger(value) && value >= min && value <= max
    ? value
    : refuse(`${field} must be a whole number from ${min}${max === Number.MAX_SAFE_INTEGER ? "" : ` to ${max}`}`)

const boolean = (value: unknown, field: string): boolean => typeof value === "boolean" ? value : refuse(`${field} must be true or false`)

/** An optional field: absent (or null) stays absent, anything else is checked. */
const optional = <A, K extends string>(fields: Fields, key: K, check: (value: unknown) => A): { readonly [P in K]?: A } =>
  (present(fields[key]) ? { [key]: check(fields[key]) } : {}) as { readonly [P in K]?: A }

/** Whether `tz` names a time zone (IANA names as the platform's Intl knows them, `UTC` included). */
export const isTimeZone = (tz: string): boolean => {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz })
    return true
  } catch {
    return false
  }
}

const isoDateTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})?$/i

const cronSchedule = (fields: Fields, now: Date): Schedule => {
  const expr = text(fields["expr"], "schedule.expr")
  const tz = present(fields["tz"]) ? text(fields["tz"], "schedule.tz") : undefined
  if (tz !== undefined && !isTimeZone(tz)) refuse(`schedule.tz ${JSON.stringify(tz)} is not a known time zone`)
  let runs: ReadonlyArray<Date> = []
  try {
    runs = new Cron(expr, { paused: true, ...(tz === undefined ? {} : { timezone: tz }) }).nextRuns(5, now)
  } catch (error) {
    refuse(`schedule.expr: ${error instanceof Error ? error.message : String(error)}`)
  }
  if (runs.length === 0) refuse("schedule.expr never fires again")
  // Several runs within one minute show in the first five whenever the seconds field allows more than one value.
  if (runs.some((run, i) => i > 0 && run.getTime() - runs[i - 1]!.getTime() < MinIntervalMs)) {
    refuse("schedule.expr fires more often than once a minute")
  }
  return tz === undefined ? { kind: "cron", expr } : { kind: "cron", expr, tz }
}

const atSchedule = (fields: Fields, now: Date): Schedule => {
  const at = text(fields["at"], "schedule.at")
  if (!isoDateTime.test(at)) refuse("schedule.at must be an ISO 8601 date-time")
  const millis = Date.parse(/(?:Z|[+-]\d{2}:\d{2})$/i.test(at) ? at : `${at}Z`)
  if (Number.isNaN(millis)) refuse("schedule.at must be an ISO 8601 date-time")
  if (millis <= now.getTime()) refuse("schedule.at must be in the future")
  return { kind: "at", at: new Date(millis).toISOString() }
}

const schedule = (value: unknown, now: Date): Schedule => {
  // A cron expression alone is the shorthand a reader of the interface reaches for first.
  if (typeof value === "string") return cronSchedule({ expr: value }, now)
  const fields = record(value, "schedule")
  switch (fields["kind"]) {
    case "cron":
      return cronSchedule(fields, now)
    case "every":
      return {
        kind: "every",
        everyMs: integer(fields["everyMs"], "schedule.everyMs", MinIntervalMs),
        ...optional(fields, "staggerMs", (v) => integer(v, "schedule.staggerMs", 0))
      }
    case "at":
      return atSchedule(fields, now)
    default:
      return refuse("schedule.kind must be one of cron, every, at")
  }
}

const payload = (value: unknown): Payload => {
  // A plain message is a turn of the agent's with that text.
  if (typeof value === "string") return { kind: "agentTurn", text: text(value, "payload") }
  const fields = record(value, "payload")
  switch (fields["kind"]) {
    case "agentTurn":
      return {
        kind: "agentTurn",
        text: text(fields["text"], "payload.text"),
        ...optional(fields, "model", (v) => text(v, "payload.model")),
        ...optional(fields, "thinking", (v) => text(v, "payload.thinking")),
        ...optional(fields, "timeoutSeconds", (v) => integer(v, "payload.timeoutSeconds", 1, MaxTimeoutSeconds))
      }
    case "systemEvent":
      return { kind: "systemEvent", message: text(fields["message"], "payload.message") }
    default:
      return refuse("payload.kind must be one of agentTurn, systemEvent")
  }
}

const isWebUrl = (value: string) => {
  try {
    const url = new URL(value)
    return url.protocol === "http:" || url.protocol === "https:"
  } catch {
    return false
  }
}

const delivery = (value: unknown): Delivery => {
  const fields = record(value, "delivery")
  const checked: Delivery = {
    mode: oneOf(fields["mode"], "delivery.mode", ["none", "announce", "webhook"]),
    ...optional(fields, "channel", (v) => text(v, "delivery.channel")),
    ...optional(fields, "to", (v) => text(v, "delivery.to")),
    ...optional(fields, "bestEffort", (v) => boolean(v, "delivery.bestEffort"))
  }
  if (checked.mode === "webhook" && (checked.to === undefined || !isWebUrl(checked.to))) {
    refuse("delivery.to must be an http(s) URL for a webhook")
  }
  return checked
}

/** The engine runs a `main`-session task as a system event and an `isolated` one as an agent turn, and refuses others. */
const sessionFits = (sessionTarget: string | undefined, payloadKind: string) => {
  if (sessionTarget === "main" && payloadKind !== "systemEvent") refuse("a task on the main session needs a systemEvent payload")
  if (sessionTarget === "isolated" && payloadKind !== "agentTurn") refuse("an isolated task needs an agentTurn payload")
}

/** The fields a task may have or not, those given checked. */
const optionalFields = (fields: Fields): Omit<Patch, "name" | "schedule" | "payload"> => ({
  ...optional(fields, "description", (v) => text(v, "description", MaxDescriptionLength)),
  ...optional(fields, "enabled", (v) => boolean(v, "enabled")),
  ...optional(fields, "sessionTarget", (v) => oneOf(v, "sessionTarget", ["main", "isolated"])),
  ...optional(fields, "wakeMode", (v) => oneOf(v, "wakeMode", ["now", "next-heartbeat"])),
  ...optional(fields, "delivery", delivery)
})

const bodyFields = (input: unknown): Fields => isRecord(input) ? input : refuse("the body must be a JSON object")

/** A new task, checked at `now` (ISO 8601): a schedule must fire after it. */
export const parseSpec = (input: unknown, now: string): Result.Result<Spec, InvalidParameters> =>
  checked(() => {
    const fields = bodyFields(input)
    const name = text(fields["name"], "name", MaxNameLength)
    const checkedSchedule = schedule(fields["schedule"], new Date(now))
    const checkedPayload = payload(fields["payload"])
    const rest = optionalFields(fields)
    sessionFits(rest.sessionTarget, checkedPayload.kind)
    return { name, ...rest, schedule: checkedSchedule, payload: checkedPayload }
  })

/** A change to `current`, checked at `now`: at least one field, each as on create, and the result still fits together. */
export const parsePatch = (input: unknown, current: Current, now: string): Result.Result<Patch, InvalidParameters> =>
  checked(() => {
    const fields = bodyFields(input)
    const patch: Patch = {
      ...optional(fields, "name", (v) => text(v, "name", MaxNameLength)),
      ...optionalFields(fields),
      ...optional(fields, "schedule", (v) => schedule(v, new Date(now))),
      ...optional(fields, "payload", payload)
    }
    if (Object.keys(patch).length === 0) refuse(`nothing to change: give at least one of ${patchFields.join(", ")}`)
    sessionFits(patch.sessionTarget ?? current.sessionTarget, (patch.payload ?? current.payload).kind)
    return patch
  })

/** A toggle's body: `{enabled}`. */
export const parseToggle = (input: unknown): Result.Result<boolean, InvalidParameters> =>
  checked(() => boolean(record(input, "the body")["enabled"], "enabled"))

/** `?limit=` of a task's runs: absent is DefaultRuns, more than MaxRuns is MaxRuns, anything but a whole number ≥ 1 is refused. */
export const runsLimit = (raw: string | null | undefined): Result.Result<number, InvalidParameters> =>
  checked(() => {
    if (raw === null || raw === undefined || raw === "") return DefaultRuns
    if (!/^\d+$/.test(raw) || Number(raw) < 1) refuse("limit must be a whole number from 1")
    return Math.min(Number(raw), MaxRuns)
  })

/** `?includeDisabled=`: `true`/`1` or `false`/`0`; absent is false (the engine's own default). */
export const includeDisabled = (raw: string | null | undefined): Result.Result<boolean, InvalidParameters> =>
  checked(() => {
    if (raw === null || raw === undefined || raw === "" || raw === "false" || raw === "0") return false
    if (raw === "true" || raw === "1") return true
    return refuse("includeDisabled must be true or false")
  })

/** Whether one more user task fits beside `tasks` (the engine's own jobs do not count). */
export const checkRoom = (tasks: ReadonlyArray<{ readonly system: boolean }>): Result.Result<void, ValidationFailed> =>
  tasks.filter((task) => !task.system).length >= MaxPerAgent ? Result.fail(tooMany()) : Result.void

export const tooMany = () => new ValidationFailed({ detail: `tasks exceeds maximum of ${MaxPerAgent}` })
