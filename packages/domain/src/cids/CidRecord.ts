/**
 * What the service knows of one CID on one network (stream `cid-<network>-<cid>`): who uploaded it first and
 * when, which workspaces hold live files of it, and its signature. This is where the signature rules live:
 * a CID may be signed by a workspace that owns it and uploaded it first there, and only once.
 */
import { Option, Result, Schema } from "effect"
import { Network } from "../Network.ts"

export class CidUploaded extends Schema.TaggedClass<CidUploaded>()("CidUploaded", {
  cid: Schema.String,
  network: Network,
  workspaceId: Schema.String,
  fileId: Schema.String,
  at: Schema.String
}) {}

export class CidReleased extends Schema.TaggedClass<CidReleased>()("CidReleased", {
  cid: Schema.String,
  network: Network,
  workspaceId: Schema.String,
  fileId: Schema.String,
  at: Schema.String
}) {}

export class SignatureAdded extends Schema.TaggedClass<SignatureAdded>()("SignatureAdded", {
  cid: Schema.String,
  network: Network,
  workspaceId: Schema.String,
  address: Schema.String,
  signature: Schema.String,
  at: Schema.String
}) {}

export class SignatureRemoved extends Schema.TaggedClass<SignatureRemoved>()("SignatureRemoved", {
  cid: Schema.String,
  network: Network,
  workspaceId: Schema.String,
  at: Schema.String
}) {}

export const CidEvent = Schema.Union([CidUploaded, CidReleased, SignatureAdded, SignatureRemoved])
export type CidEvent = typeof CidEvent.Type

export class CidNotOwned extends Schema.TaggedError<CidNotOwned>()("CidNotOwned", { cid: Schema.String }) {
  readonly status = 403
  override get message() {
    return "CID not owned by this workspace: it must hold the file and have uploaded it first"
  }
}

export class CidAlreadySigned extends Schema.TaggedError<CidAlreadySigned>()("CidAlreadySigned", { cid: Schema.String }) {
  readonly status = 409
  override get message() {
    return "CID already has a signature"
  }
}

export class SignatureNotFound extends Schema.TaggedError<SignatureNotFound>()("SignatureNotFound", { cid: Schema.String }) {
  readonly status = 404
  override get message() {
    return "Signature not found"
  }
}

export class SignatureDoesNotVerify extends Schema.TaggedError<SignatureDoesNotVerify>()("SignatureDoesNotVerify", {
  cid: Schema.String
}) {
  readonly status = 400
  override get message() {
    return "Validation failed: signature does not verify for this address, CID and upload date"
  }
}

export interface CidState {
  readonly firstUpload: Option.Option<{ readonly workspaceId: string; readonly at: string }>
  /** Live files of this CID per workspace. */
  readonly liveFiles: ReadonlyMap<string, number>
  readonly signature: Option.Option<SignatureAdded>
}

export const initial: CidState = { firstUpload: Option.none(), liveFiles: new Map(), signature: Option.none() }

const count = (files: ReadonlyMap<string, number>, workspaceId: string, delta: number) => {
  const next = new Map(files)
  const n = (next.get(workspaceId) ?? 0) + delta
  if (n > 0) next.set(workspaceId, n)
  else next.delete(workspaceId)
  return next
}

export const evolve = (state: CidState, event: CidEvent): CidState => {
  switch (event._tag) {
    case "CidUploaded":
      return {
        ...state,
        firstUpload: Option.orElse(state.firstUpload, () => Option.some({ workspaceId: event.workspaceId, at: event.at })),
        liveFiles: count(state.liveFiles, event.workspaceId, 1)
      }
    case "CidReleased":
      return { ...state, liveFiles: count(state.liveFiles, event.workspaceId, -1) }
    case "SignatureAdded":
      return { ...state, signature: Option.some(event) }
    case "SignatureRemoved":
      return { ...state, signature: Option.none() }
  }
}

export const stream = (network: Network, cid: string) => `cid-${network}-${cid}`

/**
 * The upload date the signature must cover, when `workspaceId` may sign this CID: it holds a live file of it
 * and uploaded it first. Checked before the signature is verified, since verification needs the date.
 */
export const signableBy = (state: CidState, cid: string, workspaceId: string): Result.Result<string, CidNotOwned | CidAlreadySigned> => {
  if (!state.liveFiles.has(workspaceId)) return Result.fail(new CidNotOwned({ cid }))
  if (Option.isNone(state.firstUpload) || state.firstUpload.value.workspaceId !== workspaceId) {
    return Result.fail(new CidNotOwned({ cid }))
  }
  if (Option.isSome(state.signature)) return Result.fail(new CidAlreadySigned({ cid }))
  return Result.succeed(state.firstUpload.value.at)
}

export const addSignature = (
  state: CidState,
  command: {
    readonly cid: string
    readonly network: Network
    readonly workspaceId: string
    readonly address: string
    readonly signature: string
    /** Whether the verifier accepted the signature over the date `signableBy` returned. */
    readonly verified: boolean
    readonly at: string
  }
): Result.Result<ReadonlyArray<CidEvent>, CidNotOwned | CidAlreadySigned | SignatureDoesNotVerify> =>
  Result.flatMap(signableBy(state, command.cid, command.workspaceId), () =>
    command.verified
      ? Result.succeed([
        new SignatureAdded({
          cid: command.cid,
          network: command.network,
          workspaceId: command.workspaceId,
          address: command.address,
          signature: command.signature,
          at: command.at
        })
      ])
      : Result.fail(new SignatureDoesNotVerify({ cid: command.cid })))

/** Only the workspace that signed may remove the signature. */
export const removeSignature = (
  state: CidState,
  command: { readonly cid: string; readonly network: Network; readonly workspaceId: string; readonly at: string }
): Result.Result<ReadonlyArray<CidEvent>, SignatureNotFound | CidNotOwned> =>
  Option.match(state.signature, {
    onNone: () => Result.fail(new SignatureNotFound({ cid: command.cid })),
    onSome: (signature) =>
      signature.workspaceId === command.workspaceId
        ? Result.succeed([new SignatureRemoved(command)])
        : Result.fail(new CidNotOwned({ cid: command.cid }))
  })
