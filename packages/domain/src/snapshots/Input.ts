/** The rules on what clients send the snapshot endpoints: a reset names a CID, in any base; it is kept canonical. */
import { Option, Result } from "effect"
import { canonical } from "../Cid.ts"
import { ValidationFailed } from "../ValidationFailed.ts"
import { InvalidSnapshotCid } from "./Errors.ts"

/** The reset body's `snapshotCid` in canonical form; a body that is not JSON, or lacks a well-formed CID, is refused. */
export const resetTarget = (body: string): Result.Result<string, InvalidSnapshotCid> => {
  let input: unknown
  try {
    input = JSON.parse(body)
  } catch {
    return Result.fail(new InvalidSnapshotCid())
  }
  const cid = typeof input === "object" && input !== null ? (input as { snapshotCid?: unknown }).snapshotCid : undefined
  if (typeof cid !== "string" || cid.trim() === "") return Result.fail(new InvalidSnapshotCid())
  return Option.match(canonical(cid), { onNone: () => Result.fail(new InvalidSnapshotCid()), onSome: Result.succeed })
}

/** A snapshot CID in a path (`…/snapshots/{cid}/…`), canonical; one that is no CID is refused like a reset's. */
export const pathSnapshotCid = (raw: string): Result.Result<string, InvalidSnapshotCid> =>
  Option.match(canonical(raw), { onNone: () => Result.fail(new InvalidSnapshotCid()), onSome: Result.succeed })

/** A diff's `against`: the snapshot it is compared with, required, canonical. */
export const diffAgainst = (raw: string | null): Result.Result<string, ValidationFailed> => {
  if (raw === null || raw.trim() === "") return Result.fail(new ValidationFailed({ detail: "against is required: the CID of the snapshot to compare with" }))
  return Option.match(canonical(raw), {
    onNone: () => Result.fail(new ValidationFailed({ detail: "against is not a valid CID" })),
    onSome: Result.succeed
  })
}

/** The archive formats a snapshot exports to. */
export const exportFormats = ["car", "tar.gz"] as const
export type ExportFormat = (typeof exportFormats)[number]

/** An export's `format`: `car` (the snapshot's DAG, CARv1) or `tar.gz` (its files), required. */
export const exportFormat = (raw: string | null): Result.Result<ExportFormat, ValidationFailed> =>
  exportFormats.includes(raw as ExportFormat)
    ? Result.succeed(raw as ExportFormat)
    : Result.fail(new ValidationFailed({ detail: "format must be car or tar.gz" }))
