/** A workspace's audit webhooks as their history leaves them: the registered ones, by id. */
import type { AuditWebhookRegistered } from "./Events.ts"

export interface AuditWebhooksState {
  readonly webhooks: ReadonlyMap<string, AuditWebhookRegistered>
}

export const initial: AuditWebhooksState = { webhooks: new Map() }
