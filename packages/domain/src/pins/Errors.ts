/** Why a pin job command was refused. */
import { Schema } from "effect"

/** No job of this id in the caller's workspace (or on this network). */
export class PinJobNotFound extends Schema.TaggedError<PinJobNotFound>()("PinJobNotFound", { jobId: Schema.String }) {
  readonly status = 404
  override readonly message = "Pin job not found"
}

/** The job was queued already (a job id is random: a bug, not the client's doing). */
export class PinJobExists extends Schema.TaggedError<PinJobExists>()("PinJobExists", { jobId: Schema.String }) {
  readonly status = 409
  override readonly message = "Pin job already exists"
}

/** The job is done (pinned, failed or cancelled): nothing to cancel, no more progress to record. */
export class PinJobFinished extends Schema.TaggedError<PinJobFinished>()("PinJobFinished", {
  jobId: Schema.String,
  current: Schema.String
}) {
  readonly status = 409
  override get message() {
    return `Pin job is already ${this.current}`
  }
}

/** Another node's worker has the job (and its lease has not expired): this node leaves it alone. */
export class PinJobTaken extends Schema.TaggedError<PinJobTaken>()("PinJobTaken", { jobId: Schema.String, node: Schema.String }) {
  readonly status = 409
  override get message() {
    return `Pin job is worked on by node ${this.node}`
  }
}

export type PinJobError = PinJobNotFound | PinJobExists | PinJobFinished | PinJobTaken
