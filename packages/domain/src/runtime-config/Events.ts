/**
 * What happens to an agent's runtime config through Cairn (stream `agentconfig-<agentId>`): it is written. The
 * config itself lives in the engine and may hold credentials, so an event names the top-level settings that changed
 * and the hashes, never a value. Stored: the schema only ever grows optional fields.
 */
import { Schema } from "effect"

export class RuntimeConfigWritten extends Schema.TaggedClass<RuntimeConfigWritten>()("RuntimeConfigWritten", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  /** The top-level keys whose value differs from the config read before the write (added and removed ones too). */
  changedPaths: Schema.Array(Schema.String),
  /** The engine's hash of the version the write replaced, when it could be read. */
  previousHash: Schema.optionalKey(Schema.String),
  /** The engine's hash of the version written. */
  hash: Schema.String,
  at: Schema.String
}) {}

export const RuntimeConfigEvent = Schema.Union([RuntimeConfigWritten])
export type RuntimeConfigEvent = typeof RuntimeConfigEvent.Type
