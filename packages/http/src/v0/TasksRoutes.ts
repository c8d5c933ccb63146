/**
 * An agent's scheduled tasks (the engine's cron): list (`?includeDisabled=`), create (201), get, change, delete, run
 * now, toggle (`{enabled}`) and recent runs (`?limit=`). A task is answered as the engine holds it, its own jobs
 * marked `system: true`. Bodies are read as text, so that one that is not JSON is `Invalid parameters` like any
 * other malformed task.
 */
import { Tasks } from "@cairn/application"
import { Effect } from "effect"
import { HttpRouter } from "effect/http"
import * as Kit from "./Kit.ts"

const { query } = Kit

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { agentRoute } = yield* Kit.make(router)
    const tasks = yield* Tasks

    yield* agentRoute("GET", "/v0/agents/:agentId/tasks", ({ principal, agentId, request }) =>
      Effect.map(tasks.list(principal, agentId, query(request, "includeDisabled")), (list) => ({ tasks: list })))

    yield* agentRoute("POST", "/v0/agents/:agentId/tasks", ({ principal, agentId, request }) =>
      Effect.gen(function*() {
        const task = yield* tasks.create(principal, agentId, yield* request.text)
        return Kit.created({ success: true, task })
      }))

    yield* agentRoute("GET", "/v0/agents/:agentId/tasks/:jobId", ({ principal, agentId, params }) =>
      Effect.map(tasks.get(principal, agentId, params["jobId"] ?? ""), (task) => ({ task })))

    yield* agentRoute("PUT", "/v0/agents/:agentId/tasks/:jobId", ({ principal, agentId, params, request }) =>
      Effect.gen(function*() {
        const task = yield* tasks.update(principal, agentId, params["jobId"] ?? "", yield* request.text)
        return { success: true, task }
      }))

    yield* agentRoute("DELETE", "/v0/agents/:agentId/tasks/:jobId", ({ principal, agentId, params }) =>
      Effect.as(tasks.remove(principal, agentId, params["jobId"] ?? ""), { success: true, message: "Task deleted" }))

    yield* agentRoute("POST", "/v0/agents/:agentId/tasks/:jobId/run", ({ principal, agentId, params }) =>
      Effect.map(tasks.run(principal, agentId, params["jobId"] ?? ""), ({ runId }) => ({ success: true, runId })))

    yield* agentRoute("POST", "/v0/agents/:agentId/tasks/:jobId/toggle", ({ principal, agentId, params, request }) =>
      Effect.gen(function*() {
        const task = yield* tasks.toggle(principal, agentId, params["jobId"] ?? "", yield* request.text)
        return { success: true, task }
      }))

    yield* agentRoute("GET", "/v0/agents/:agentId/tasks/:jobId/runs", ({ principal, agentId, params, request }) =>
      Effect.map(tasks.runs(principal, agentId, params["jobId"] ?? "", query(request, "limit")), (runs) => ({ runs })))
  })
)
