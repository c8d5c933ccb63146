/** Input that breaks a documented rule: 400 `Validation failed: <detail>`. */
import { Schema } from "effect"

export class ValidationFailed extends Schema.TaggedError<ValidationFailed>()("ValidationFailed", {
  detail: Schema.String
}) {
  readonly status = 400
  override get message() {
    return `Validation failed: ${this.detail}`
  }
}
