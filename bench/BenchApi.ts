/** The API as a benchmark calls it: a workspace and key of its own, and calls that throw on anything but success. */
import { newApiUser } from "@cairn/server-node/testing"

export const benchUser = (server: { readonly url: string }, dataDir: string) => {
  const api = newApiUser({ url: server.url, dataDir }, { workspace: "bench", agentLimit: 1, scopes: "org:agents" })
  // The benchmarks read whatever a call returned.
  const call = async (method: string, path: string, body?: unknown): Promise<any> => {
    const response = await api.call(method, path, body)
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(response.body)}`)
    return response.body
  }
  return { ...api, call }
}
