/**
 * What is uploaded into an agent's workspace (stream `uploads-<agentId>`): for audit, which file, how big and its
 * SHA-256, never its content. Stored: the schema only ever grows optional fields.
 */
import { Schema } from "effect"

export class WorkspaceFileUploaded extends Schema.TaggedClass<WorkspaceFileUploaded>()("WorkspaceFileUploaded", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  filename: Schema.String,
  /** Where it was written, relative to the workspace (`uploads/<filename>`). */
  path: Schema.String,
  size: Schema.Number,
  /** Lowercase hex. */
  sha256: Schema.String,
  at: Schema.String
}) {}

export const UploadEvent = Schema.Union([WorkspaceFileUploaded])
export type UploadEvent = typeof UploadEvent.Type
