/**
 * A workspace's audit feed (issue 37): every event recorded for the workspace, as server-sent events or delivered to
 * webhooks (stream `auditwebhooks-<workspaceId>`, one for all of the workspace's webhooks). Here: the webhook decider,
 * the URL rule, and what of an event the feed shows (never a sealed value's ciphertext).
 */
import type { Decider } from "../Decider.ts"
import { ValidationFailed } from "../ValidationFailed.ts"
import type { AuditWebhookCommand } from "./Commands.ts"
import { decide } from "./Decide.ts"
import type { AuditWebhookError } from "./Errors.ts"
import { AuditWebhookEvent } from "./Events.ts"
import { evolve } from "./Evolve.ts"
import { type AuditWebhooksState, initial } from "./State.ts"

export * from "./Commands.ts"
export { decide, type Decision, maxWebhooks } from "./Decide.ts"
export * from "./Errors.ts"
export * from "./Events.ts"
export { evolve } from "./Evolve.ts"
export * from "./State.ts"

export const stream = (workspaceId: string) => `auditwebhooks-${workspaceId}`

export const decider: Decider<AuditWebhookCommand, AuditWebhookEvent, AuditWebhooksState, AuditWebhookError> = {
  initial,
  decide,
  evolve,
  events: AuditWebhookEvent
}

export const maxUrlLength = 2048

/**
 * A webhook's URL: absolute `http:` or `https:`, without credentials in it (they would be shown back by the list),
 * at most `maxUrlLength` characters. Returns the URL as it will be called.
 */
export const checkUrl = (input: unknown): ValidationFailed | string => {
  if (typeof input !== "string" || input.length === 0) return new ValidationFailed({ detail: "url is required" })
  if (input.length > maxUrlLength) return new ValidationFailed({ detail: `url is longer than ${maxUrlLength} characters` })
  if (!URL.canParse(input)) return new ValidationFailed({ detail: "url is not an absolute URL" })
  const url = new URL(input)
  if (url.protocol !== "http:" && url.protocol !== "https:") return new ValidationFailed({ detail: "url must be http or https" })
  if (url.username !== "" || url.password !== "") return new ValidationFailed({ detail: "url must not carry credentials" })
  return url.toString()
}

/**
 * An event's data as the audit feed shows it: every `sealed` value (a secret's or a channel token's ciphertext, a
 * webhook's signing key) is left out. The plaintext is never in an event; its ciphertext is of no use to a monitor.
 */
export const shownData = (data: unknown): unknown => {
  if (Array.isArray(data)) return data.map(shownData)
  if (typeof data !== "object" || data === null) return data
  const shown: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(data)) {
    if (key !== "sealed") shown[key] = shownData(value)
  }
  return shown
}
