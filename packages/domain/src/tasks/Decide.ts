/**
 * Decides a task-record command. The engine has done the thing already, so everything is recorded, except a creation
 * under an id the record already holds live (engine ids are unique; a second one is a retried request, refused rather
 * than recorded twice). Pure and total.
 */
import { Match, Result } from "effect"
import type { TaskCommand } from "./Commands.ts"
import { TaskAlreadyRecorded, type TaskError } from "./Errors.ts"
import { TaskCreated, TaskDeleted, type TaskEvent, TaskRunRequested, TaskToggled, TaskUpdated, TemplateTasksCreated } from "./Events.ts"
import type { TasksState } from "./State.ts"

export type Decision = Result.Result<ReadonlyArray<TaskEvent>, TaskError>

export const decide = (command: TaskCommand, state: TasksState): Decision =>
  Match.valueTags(command, {
    RecordTaskCreated: ({ _tag, ...fields }): Decision =>
      state.live.has(fields.taskId)
        ? Result.fail(new TaskAlreadyRecorded({ taskId: fields.taskId }))
        : Result.succeed([new TaskCreated(fields)]),
    RecordTaskUpdated: ({ _tag, ...fields }): Decision => Result.succeed([new TaskUpdated(fields)]),
    RecordTaskToggled: ({ _tag, ...fields }): Decision => Result.succeed([new TaskToggled(fields)]),
    RecordTaskDeleted: ({ _tag, ...fields }): Decision => Result.succeed([new TaskDeleted(fields)]),
    RecordTaskRunRequested: ({ _tag, ...fields }): Decision => Result.succeed([new TaskRunRequested(fields)]),
    // Once: a second creation of the template's tasks (two nodes, a retry) records nothing.
    RecordTemplateTasksCreated: ({ _tag, ...fields }): Decision =>
      state.templateTasksCreated ? Result.succeed([]) : Result.succeed([new TemplateTasksCreated(fields)])
  })
