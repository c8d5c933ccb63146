/** Folds one audit webhook event into the workspace's state. */
import { Match } from "effect"
import type { AuditWebhookEvent } from "./Events.ts"
import type { AuditWebhooksState } from "./State.ts"

export const evolve = (state: AuditWebhooksState, event: AuditWebhookEvent): AuditWebhooksState =>
  Match.valueTags(event, {
    AuditWebhookRegistered: (registered): AuditWebhooksState => ({ webhooks: new Map([...state.webhooks, [registered.webhookId, registered]]) }),
    AuditWebhookRemoved: ({ webhookId }): AuditWebhooksState => {
      const webhooks = new Map(state.webhooks)
      webhooks.delete(webhookId)
      return { webhooks }
    }
  })
