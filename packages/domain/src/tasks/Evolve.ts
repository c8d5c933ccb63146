/** Folds one task-record event into the record's state. */
import { Match } from "effect"
import type { TaskEvent } from "./Events.ts"
import type { TasksState } from "./State.ts"

const withLive = (state: TasksState, taskId: string, name: string | undefined): TasksState => {
  const live = new Map(state.live)
  if (name === undefined) live.delete(taskId)
  else live.set(taskId, name)
  return { ...state, live }
}

export const evolve = (state: TasksState, event: TaskEvent): TasksState =>
  Match.valueTags(event, {
    TaskCreated: (e) => withLive(state, e.taskId, e.name),
    TaskUpdated: (e) => state.live.has(e.taskId) ? withLive(state, e.taskId, e.name) : state,
    TaskToggled: () => state,
    TaskDeleted: (e) => withLive(state, e.taskId, undefined),
    TaskRunRequested: () => state,
    TemplateTasksCreated: () => ({ ...state, templateTasksCreated: true })
  })
