/**
 * How the scheduled-tasks endpoints refuse (service interface, section 7: `Invalid parameters`, `Failed to create cron
 * job`, `Failed to list cron jobs`; the other operations' 500s are named the same way). The application maps the
 * engine's failures onto these. Tags differ from the port's errors (TaskNotFound, SystemTaskProtected) on purpose.
 */
import { Schema } from "effect"

/** A task body or query that breaks the rules in Spec.ts; `reason` says which, beside `error`. */
export class InvalidParameters extends Schema.TaggedError<InvalidParameters>()("InvalidParameters", { reason: Schema.String }) {
  readonly status = 400
  override readonly message = "Invalid parameters"
  get details() {
    return { reason: this.reason }
  }
}

/** The engine has no task of this id for the agent. */
export class UnknownTask extends Schema.TaggedError<UnknownTask>()("UnknownTask", { taskId: Schema.String }) {
  readonly status = 404
  override readonly message = "Task not found"
}

/** One of the engine's own jobs: listed, run and toggled, but never changed or deleted. */
export class SystemTaskReadOnly extends Schema.TaggedError<SystemTaskReadOnly>()("SystemTaskReadOnly", { taskId: Schema.String }) {
  readonly status = 403
  override readonly message = "System tasks cannot be changed or deleted"
}

/** A creation recorded twice under one engine id. */
export class TaskAlreadyRecorded extends Schema.TaggedError<TaskAlreadyRecorded>()("TaskAlreadyRecorded", { taskId: Schema.String }) {
  readonly status = 409
  override readonly message = "Task already exists"
}

export class FailedToCreateCronJob extends Schema.TaggedError<FailedToCreateCronJob>()("FailedToCreateCronJob", { agentId: Schema.String }) {
  readonly status = 500
  override readonly message = "Failed to create cron job"
}

export class FailedToListCronJobs extends Schema.TaggedError<FailedToListCronJobs>()("FailedToListCronJobs", { agentId: Schema.String }) {
  readonly status = 500
  override readonly message = "Failed to list cron jobs"
}

export class FailedToReadCronJob extends Schema.TaggedError<FailedToReadCronJob>()("FailedToReadCronJob", { agentId: Schema.String }) {
  readonly status = 500
  override readonly message = "Failed to read cron job"
}

export class FailedToUpdateCronJob extends Schema.TaggedError<FailedToUpdateCronJob>()("FailedToUpdateCronJob", { agentId: Schema.String }) {
  readonly status = 500
  override readonly message = "Failed to update cron job"
}

export class FailedToDeleteCronJob extends Schema.TaggedError<FailedToDeleteCronJob>()("FailedToDeleteCronJob", { agentId: Schema.String }) {
  readonly status = 500
  override readonly message = "Failed to delete cron job"
}

export class FailedToRunCronJob extends Schema.TaggedError<FailedToRunCronJob>()("FailedToRunCronJob", { agentId: Schema.String }) {
  readonly status = 500
  override readonly message = "Failed to run cron job"
}

export class FailedToListCronJobRuns extends Schema.TaggedError<FailedToListCronJobRuns>()("FailedToListCronJobRuns", {
  agentId: Schema.String
}) {
  readonly status = 500
  override readonly message = "Failed to list cron job runs"
}

export type TaskError = TaskAlreadyRecorded
