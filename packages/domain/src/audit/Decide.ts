/** Decides an audit webhook command: at most `maxWebhooks` per workspace; only a registered one is removed. Pure and total. */
import { Match, Result } from "effect"
import type { AuditWebhookCommand } from "./Commands.ts"
import { type AuditWebhookError, AuditWebhookNotFound, TooManyAuditWebhooks } from "./Errors.ts"
import { type AuditWebhookEvent, AuditWebhookRegistered, AuditWebhookRemoved } from "./Events.ts"
import type { AuditWebhooksState } from "./State.ts"

export type Decision = Result.Result<ReadonlyArray<AuditWebhookEvent>, AuditWebhookError>

export const maxWebhooks = 5

export const decide = (command: AuditWebhookCommand, state: AuditWebhooksState): Decision =>
  Match.valueTags(command, {
    RegisterAuditWebhook: ({ _tag, ...fields }): Decision =>
      state.webhooks.size >= maxWebhooks
        ? Result.fail(new TooManyAuditWebhooks({ limit: maxWebhooks }))
        : Result.succeed([new AuditWebhookRegistered(fields)]),
    RemoveAuditWebhook: ({ _tag, ...fields }): Decision =>
      state.webhooks.has(fields.webhookId)
        ? Result.succeed([new AuditWebhookRemoved(fields)])
        : Result.fail(new AuditWebhookNotFound({ webhookId: fields.webhookId }))
  })
