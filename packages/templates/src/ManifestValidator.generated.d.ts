// The types of ManifestValidator.generated.js (ajv's standalone output, see ManifestValidatorCode.ts).
import type { ErrorObject } from "ajv"

export interface Validate {
  (data: unknown): boolean
  errors?: Array<ErrorObject> | null
}

export declare const validate: Validate
export default validate
