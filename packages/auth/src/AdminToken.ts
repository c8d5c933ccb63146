/**
 * The AdminToken port: the token that guards the operator endpoints. The service only answers whether a candidate
 * matches and tells where the token lives (never what it is). The adapter that reads it from `ADMIN_TOKEN` or a
 * generated file is `HashedAdminToken` in `@cairn/auth/node`.
 */
import { Context, type Effect, Schema } from "effect"

/** Where the token came from, for the startup log. */
export type Source =
  | { readonly _tag: "Config" }
  | { readonly _tag: "File"; readonly path: string; readonly created: boolean }

export class AdminToken extends Context.Service<AdminToken, {
  readonly verify: (candidate: string) => Effect.Effect<boolean>
  readonly source: Source
}>()("cairn/AdminToken") {}

/** A blank token would let an empty `Authorization` header in, so it is refused at startup. */
export class InvalidAdminToken extends Schema.TaggedError<InvalidAdminToken>()("InvalidAdminToken", {
  source: Schema.String
}) {
  override get message() {
    return `The admin token in ${this.source} is blank`
  }
}
