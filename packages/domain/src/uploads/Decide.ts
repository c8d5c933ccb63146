/** Decides an upload record: each is recorded as it happened. Pure and total. */
import { Match, Result } from "effect"
import type { UploadCommand } from "./Commands.ts"
import type { UploadError } from "./Errors.ts"
import { type UploadEvent, WorkspaceFileUploaded } from "./Events.ts"
import type { UploadState } from "./State.ts"

export type Decision = Result.Result<ReadonlyArray<UploadEvent>, UploadError>

export const decide = (command: UploadCommand, _state: UploadState): Decision =>
  Match.valueTags(command, {
    RecordUpload: ({ _tag, ...fields }): Decision => Result.succeed([new WorkspaceFileUploaded(fields)])
  })
