/**
 * A file as its history leaves it: not uploaded, stored (its upload record with the latest name, key-values and
 * group; a group deleted since still shows here, and counts as none), or deleted (the record kept, so the service
 * still knows which CID it held).
 */
import type { FileUploaded } from "./Events.ts"

export type FileState =
  | { readonly _tag: "NoFile" }
  | { readonly _tag: "Stored"; readonly file: FileUploaded }
  | { readonly _tag: "Deleted"; readonly file: FileUploaded }

export const initial: FileState = { _tag: "NoFile" }
