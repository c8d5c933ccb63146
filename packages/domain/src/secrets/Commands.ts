/**
 * What can be asked of a secret. The application seals the value before deciding (deciding stays pure), so a
 * value change carries the version it was sealed for: a change decided against another version is refused.
 */
import { Schema } from "effect"
import { fieldsOf } from "../Decider.ts"
import { Sealed, SecretCreated } from "./Events.ts"

/** The secret is recorded as it is created, its value already sealed (and its name checked by `validateName`). */
export class CreateSecret extends Schema.TaggedClass<CreateSecret>()("CreateSecret", fieldsOf(SecretCreated.fields)) {}

export class ChangeSecretValue extends Schema.TaggedClass<ChangeSecretValue>()("ChangeSecretValue", {
  secretId: Schema.String,
  workspaceId: Schema.String,
  /** The version the new value was sealed as: the current one plus one. */
  version: Schema.Int,
  sealed: Sealed,
  at: Schema.String
}) {}

export class AttachSecret extends Schema.TaggedClass<AttachSecret>()("AttachSecret", {
  secretId: Schema.String,
  workspaceId: Schema.String,
  agentId: Schema.String,
  agentName: Schema.String,
  at: Schema.String
}) {}

export class DetachSecret extends Schema.TaggedClass<DetachSecret>()("DetachSecret", {
  secretId: Schema.String,
  workspaceId: Schema.String,
  agentId: Schema.String,
  at: Schema.String
}) {}

export class DeleteSecret extends Schema.TaggedClass<DeleteSecret>()("DeleteSecret", {
  secretId: Schema.String,
  workspaceId: Schema.String,
  at: Schema.String
}) {}

export const SecretCommand = Schema.Union([CreateSecret, ChangeSecretValue, AttachSecret, DetachSecret, DeleteSecret])
export type SecretCommand = typeof SecretCommand.Type
