/** The rules on what clients send the snapshot endpoints: a reset names a CID, in any base; it is kept canonical. */
import { Option, Result } from "effect"
import { canonical } from "../Cid.ts"
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
