/** What can be asked of a workspace's audit webhooks: register one (with its key already sealed), remove one. */
import { Schema } from "effect"
import { fieldsOf } from "../Decider.ts"
import { AuditWebhookRegistered, AuditWebhookRemoved } from "./Events.ts"

export class RegisterAuditWebhook extends Schema.TaggedClass<RegisterAuditWebhook>()("RegisterAuditWebhook", fieldsOf(AuditWebhookRegistered.fields)) {}

export class RemoveAuditWebhook extends Schema.TaggedClass<RemoveAuditWebhook>()("RemoveAuditWebhook", fieldsOf(AuditWebhookRemoved.fields)) {}

export const AuditWebhookCommand = Schema.Union([RegisterAuditWebhook, RemoveAuditWebhook])
export type AuditWebhookCommand = typeof AuditWebhookCommand.Type
