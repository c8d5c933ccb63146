/** Why an audit webhook command was refused. */
import { Schema } from "effect"

export class AuditWebhookNotFound extends Schema.TaggedError<AuditWebhookNotFound>()("AuditWebhookNotFound", { webhookId: Schema.String }) {
  readonly status = 404
  override readonly message = "Audit webhook not found"
}

/** A workspace has at most `maxWebhooks` (each is a consumer of the whole log). */
export class TooManyAuditWebhooks extends Schema.TaggedError<TooManyAuditWebhooks>()("TooManyAuditWebhooks", { limit: Schema.Int }) {
  readonly status = 409
  override readonly message = "Too many audit webhooks"
  get details() {
    return { limit: this.limit }
  }
}

export type AuditWebhookError = AuditWebhookNotFound | TooManyAuditWebhooks
