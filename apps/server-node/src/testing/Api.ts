/** A user of a running server: a workspace and a key made with the admin CLI, and JSON calls with that key. */
import { cli } from "./Cli.ts"

export interface ApiResponse {
  readonly status: number
  // Tests read whatever the server answered.
  readonly body: any
}

export interface ApiUser {
  readonly workspaceId: string
  readonly token: string
  readonly call: (method: string, path: string, body?: unknown) => Promise<ApiResponse>
}

export const newApiUser = (
  ops: { readonly url: string; readonly dataDir: string },
  options: { readonly workspace: string; readonly agentLimit?: number; readonly scopes: string }
): ApiUser => {
  const workspaceId = cli(ops, "workspace", "create", "--name", options.workspace, ...(options.agentLimit === undefined ? [] : ["--agent-limit", String(options.agentLimit)]))
  const token = cli(ops, "key", "create", "--workspace", workspaceId, "--user", "ada", "--scopes", options.scopes)
  const call = async (method: string, path: string, body?: unknown): Promise<ApiResponse> => {
    const response = await fetch(`${ops.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
  }
  return { workspaceId, token, call }
}
