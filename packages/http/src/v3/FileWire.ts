/** The v3 wire shape of a file, field for field what the pinata SDK reads (snake_case, `created_at` with ms). */
import type { FileView } from "@cairn/application"

export const toWire = (file: FileView) => ({
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
