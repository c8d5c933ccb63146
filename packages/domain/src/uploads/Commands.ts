/** What the uploads log records: a file written into the workspace, as it was written (the service wrote it first). */
import { Schema } from "effect"
import { fieldsOf } from "../Decider.ts"
import { WorkspaceFileUploaded } from "./Events.ts"

export class RecordUpload extends Schema.TaggedClass<RecordUpload>()("RecordUpload", fieldsOf(WorkspaceFileUploaded.fields)) {}

export const UploadCommand = Schema.Union([RecordUpload])
export type UploadCommand = typeof UploadCommand.Type
