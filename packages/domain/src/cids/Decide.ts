/**
 * Decides a CID command. This is where the signature rules live: a CID may be signed by a workspace that holds a
 * live file of it and uploaded it first there, only once, and only with a signature that verifies; only the
 * signer may remove it. Uploads and releases are bookkeeping and are never refused. Pure and total.
 */
import { Match, Option, Result } from "effect"
import type { CidCommand } from "./Commands.ts"
import { CidAlreadySigned, type CidError, CidNotOwned, SignatureDoesNotVerify, SignatureNotFound } from "./Errors.ts"
import { CidReleased, type CidEvent, CidUploaded, SignatureAdded, SignatureRemoved } from "./Events.ts"
import { type CidState, holds } from "./State.ts"

export type Decision = Result.Result<ReadonlyArray<CidEvent>, CidError>

/**
 * The upload date the signature must cover, when `workspaceId` may sign this CID: it holds a live file of it
 * and uploaded it first. The service asks before verifying the signature, since verification needs the date.
 */
export const signableBy = (state: CidState, cid: string, workspaceId: string): Result.Result<string, CidNotOwned | CidAlreadySigned> => {
  if (!holds(state, workspaceId)) return Result.fail(new CidNotOwned({ cid }))
  if (Option.isNone(state.firstUpload) || state.firstUpload.value.workspaceId !== workspaceId) {
    return Result.fail(new CidNotOwned({ cid }))
  }
  if (Option.isSome(state.signature)) return Result.fail(new CidAlreadySigned({ cid }))
  return Result.succeed(state.firstUpload.value.at)
}

export const decide = (command: CidCommand, state: CidState): Decision =>
  Match.valueTags(command, {
    // An upload already recorded (the same file id) is recorded once.
    RecordCidUpload: ({ _tag, ...fields }): Decision => Result.succeed(state.liveFiles.has(fields.fileId) ? [] : [new CidUploaded(fields)]),
    ReleaseCid: ({ _tag, ...fields }): Decision => Result.succeed(state.liveFiles.has(fields.fileId) ? [new CidReleased(fields)] : []),
    AddSignature: ({ _tag, verified, ...fields }) =>
      Result.flatMap(signableBy(state, fields.cid, fields.workspaceId), (): Decision =>
        verified ? Result.succeed([new SignatureAdded(fields)]) : Result.fail(new SignatureDoesNotVerify({ cid: fields.cid }))),
    RemoveSignature: ({ _tag, ...fields }): Decision =>
      Option.match(state.signature, {
        onNone: (): Decision => Result.fail(new SignatureNotFound({ cid: fields.cid })),
        onSome: (signature): Decision =>
          signature.workspaceId === fields.workspaceId
            ? Result.succeed([new SignatureRemoved(fields)])
            : Result.fail(new CidNotOwned({ cid: fields.cid }))
      })
  })
