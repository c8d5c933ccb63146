/**
 * A file as its history leaves it: not uploaded, stored (its upload record with the latest name and key-values),
 * or deleted (the record kept, so the service still knows which CID it held).
 */
import type { FileUploaded } from "./Events.ts"

export type FileState =
  | { readonly _tag: "NoFile" }
  | { readonly _tag: "Stored"; readonly file: FileUploaded }
  | { readonly _tag: "Deleted"; readonly file: FileUploaded }

export const initial: FileState = { _tag: "NoFile" }
