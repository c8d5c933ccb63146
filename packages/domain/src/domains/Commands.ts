/** What can be asked of an agent's domains. Names come validated (Name.ts); ids, time and the limit inside. */
import { Schema } from "effect"
import { Kind, RemovalReason } from "./Events.ts"

export class AddDomain extends Schema.TaggedClass<AddDomain>()("AddDomain", {
  domainId: Schema.String,
  agentId: Schema.String,
  workspaceId: Schema.String,
  kind: Kind,
  name: Schema.String,
  targetPort: Schema.Number,
  protected: Schema.Boolean,
  /** Custom domains only: the TXT value that will prove ownership. */
  verificationValue: Schema.optionalKey(Schema.String),
  /** The most domains the agent may have. */
  limit: Schema.Number,
  at: Schema.String
}) {}

export class ChangeDomain extends Schema.TaggedClass<ChangeDomain>()("ChangeDomain", {
  domainId: Schema.String,
  agentId: Schema.String,
  targetPort: Schema.optionalKey(Schema.Number),
  protected: Schema.optionalKey(Schema.Boolean),
  at: Schema.String
}) {}

/** The domain's TXT record was seen: it becomes active (its name is claimed beside, in the same append). */
export class VerifyDomain extends Schema.TaggedClass<VerifyDomain>()("VerifyDomain", {
  domainId: Schema.String,
  agentId: Schema.String,
  at: Schema.String
}) {}

/** A custom domain still unverified after the verification period stops being checked. */
export class ExpireDomain extends Schema.TaggedClass<ExpireDomain>()("ExpireDomain", {
  domainId: Schema.String,
  agentId: Schema.String,
  at: Schema.String
}) {}

export class RemoveDomain extends Schema.TaggedClass<RemoveDomain>()("RemoveDomain", {
  domainId: Schema.String,
  agentId: Schema.String,
  reason: RemovalReason,
  at: Schema.String
}) {}

/** Every domain of a deleted agent goes, in the same append as its deletion. */
export class RemoveAllDomains extends Schema.TaggedClass<RemoveAllDomains>()("RemoveAllDomains", {
  agentId: Schema.String,
  at: Schema.String
}) {}

export const DomainCommand = Schema.Union([AddDomain, ChangeDomain, VerifyDomain, ExpireDomain, RemoveDomain, RemoveAllDomains])
export type DomainCommand = typeof DomainCommand.Type
