/** Why a template command or lookup was refused. */
import { Schema } from "effect"

/** An unknown template, an archived one, or another workspace's (never told apart). */
export class TemplateNotFound extends Schema.TaggedError<TemplateNotFound>()("TemplateNotFound", {
  /** The id or slug asked for. */
  template: Schema.String
}) {
  readonly status = 404
  override readonly message = "Template not found"
}

export class DuplicateTemplateSlug extends Schema.TaggedError<DuplicateTemplateSlug>()("DuplicateTemplateSlug", { slug: Schema.String }) {
  readonly status = 409
  override readonly message = "Duplicate template slug"
}

/** Template ids are random; a second publish under one id is refused. */
export class TemplateAlreadyExists extends Schema.TaggedError<TemplateAlreadyExists>()("TemplateAlreadyExists", { templateId: Schema.String }) {
  readonly status = 409
  override readonly message = "Template already exists"
}

/** A template the caller can see (a public one) but did not publish. */
export class TemplateNotOwned extends Schema.TaggedError<TemplateNotOwned>()("TemplateNotOwned", { templateId: Schema.String }) {
  readonly status = 403
  override readonly message = "Forbidden: only the template's publisher may change it"
}

/**
 * The folder is not a valid template: 400 with the first reason as `error` (`Validation failed: <reason>`) and all
 * of them as `validationErrors`.
 */
export class InvalidTemplate extends Schema.TaggedError<InvalidTemplate>()("InvalidTemplate", {
  errors: Schema.Array(Schema.String)
}) {
  readonly status = 400
  override get message() {
    return `Validation failed: ${this.errors[0] ?? "the template is invalid"}`
  }
  get details() {
    return { validationErrors: this.errors }
  }
}

export type TemplateError = TemplateNotFound | TemplateAlreadyExists | TemplateNotOwned
