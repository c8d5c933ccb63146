/**
 * What happens to an agent's domains (stream `domains-<agentId>`, one per agent, so the per-agent limit is decided
 * on one stream): one is added (a subdomain active at once, a custom domain pending until its TXT record is seen),
 * its port or protection changes, a custom domain is verified or expires unverified, one is removed (by its owner,
 * or because its agent was deleted). A subdomain is stored as its label (the apps domain is the deployment's
 * setting), a custom domain as its lowercase ASCII host. Stored: the schema only ever grows optional fields.
 */
import { Schema } from "effect"

export const Kind = Schema.Literals(["subdomain", "custom"])
export type Kind = typeof Kind.Type

/** `pending_ownership`: a custom domain whose TXT record has not been seen; `expired`: it never was, in time. */
export const Status = Schema.Literals(["active", "pending_ownership", "expired"])
export type Status = typeof Status.Type

export class DomainAdded extends Schema.TaggedClass<DomainAdded>()("DomainAdded", {
  domainId: Schema.String,
  agentId: Schema.String,
  workspaceId: Schema.String,
  kind: Kind,
  name: Schema.String,
  targetPort: Schema.Number,
  protected: Schema.Boolean,
  status: Status,
  /** A custom domain's TXT value to publish at `_service-verify.<name>` (not a secret: it only proves control). */
  verificationValue: Schema.optionalKey(Schema.String),
  at: Schema.String
}) {}

export class DomainChanged extends Schema.TaggedClass<DomainChanged>()("DomainChanged", {
  domainId: Schema.String,
  agentId: Schema.String,
  targetPort: Schema.Number,
  protected: Schema.Boolean,
  at: Schema.String
}) {}

export class DomainVerified extends Schema.TaggedClass<DomainVerified>()("DomainVerified", {
  domainId: Schema.String,
  agentId: Schema.String,
  name: Schema.String,
  at: Schema.String
}) {}

export class DomainExpired extends Schema.TaggedClass<DomainExpired>()("DomainExpired", {
  domainId: Schema.String,
  agentId: Schema.String,
  at: Schema.String
}) {}

export const RemovalReason = Schema.Literals(["removed", "agent-deleted"])
export type RemovalReason = typeof RemovalReason.Type

export class DomainRemoved extends Schema.TaggedClass<DomainRemoved>()("DomainRemoved", {
  domainId: Schema.String,
  agentId: Schema.String,
  kind: Kind,
  name: Schema.String,
  reason: RemovalReason,
  at: Schema.String
}) {}

export const DomainEvent = Schema.Union([DomainAdded, DomainChanged, DomainVerified, DomainExpired, DomainRemoved])
export type DomainEvent = typeof DomainEvent.Type
