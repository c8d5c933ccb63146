/**
 * A workspace's audit webhooks (stream `auditwebhooks-<workspaceId>`): a URL registered to receive every event of the
 * workspace, signed with a key only the registration's answer shows. The key is never in an event: only its
 * ciphertext, sealed under the workspace's data key as secrets are (`Sealed`, secrets/Events.ts).
 */
import { Schema } from "effect"
import { Sealed } from "../secrets/Events.ts"

export class AuditWebhookRegistered extends Schema.TaggedClass<AuditWebhookRegistered>()("AuditWebhookRegistered", {
  webhookId: Schema.String,
  workspaceId: Schema.String,
  userId: Schema.String,
  url: Schema.String,
  /** The signing key, sealed for this workspace and webhook (version 1). */
  sealed: Sealed,
  at: Schema.String
}) {}

export class AuditWebhookRemoved extends Schema.TaggedClass<AuditWebhookRemoved>()("AuditWebhookRemoved", {
  webhookId: Schema.String,
  workspaceId: Schema.String,
  at: Schema.String
}) {}

export const AuditWebhookEvent = Schema.Union([AuditWebhookRegistered, AuditWebhookRemoved])
export type AuditWebhookEvent = typeof AuditWebhookEvent.Type
