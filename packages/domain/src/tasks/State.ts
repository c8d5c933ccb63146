/**
 * An agent's task record as its history leaves it: the tasks created through Cairn and not deleted since, by engine
 * id, with their names. (Tasks the agent made itself, and the engine's own jobs, are the engine's to list.)
 */
export interface TasksState {
  readonly live: ReadonlyMap<string, string>
  /** Whether the tasks its template declares were created (TemplateTasksCreated). */
  readonly templateTasksCreated: boolean
}

export const initial: TasksState = { live: new Map(), templateTasksCreated: false }
