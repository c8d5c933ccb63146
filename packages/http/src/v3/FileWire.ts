/**
 * The v3 wire shape of a file, field for field what the pinata SDK reads (snake_case, `created_at` with ms): the
 * Schema the route catalog documents, and `toWire`, whose result the type checker holds to it.
 */
import type { FileView } from "@cairn/application"
import { File as FileRecord, Network } from "@cairn/domain"
import { Schema } from "effect"

export const File = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  cid: Schema.String,
  size: Schema.Number,
  number_of_files: Schema.Number,
  mime_type: Schema.String,
  keyvalues: FileRecord.KeyValues,
  group_id: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  network: Network,
  user_id: Schema.String,
  vectorized: Schema.Boolean,
  is_duplicate: Schema.Boolean
})

export const toWire = (file: FileView): typeof File.Type => ({
  id: file.id,
  name: file.name,
  cid: file.cid,
  size: file.size,
  number_of_files: file.numberOfFiles,
  mime_type: file.mimeType,
  keyvalues: file.keyvalues,
  group_id: file.groupId,
  created_at: file.createdAt,
  network: file.network,
  user_id: file.userId,
  vectorized: false,
  is_duplicate: false
})
