/**
 * For tests: connections of the test's own into the network of the gateway running from an agent's home (decision
 * 0043), through the same connector Cairn uses (started by `nsenter`, as root). Where the gateway shares this
 * machine's network, a plain connection to loopback.
 */
import { Effect } from "effect"
import * as Net from "node:net"
import { startConnector } from "../AgentNetwork.ts"
import { gatewayNetworkPath } from "./GatewayProcesses.ts"

export interface IntoGatewayNetwork {
  readonly connect: (port: number) => Promise<Net.Socket>
}

/** A way to connect into the agent's gateway's network, for as long as the scope lasts. */
export const intoGatewayNetwork = (home: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const path = gatewayNetworkPath(home)
      if (path === undefined) {
        return {
          connect: (port: number) =>
            new Promise<Net.Socket>((resolve, reject) => {
              const socket = Net.connect(port, "127.0.0.1", () => resolve(socket))
              socket.once("error", reject)
            }),
          close: () => {}
        }
      }
      return startConnector(["nsenter", `--net=${path}`, "--", process.execPath], [], (socket) => socket.destroy()).spawned
    }),
    (connector) => Effect.sync(() => connector.close())
  ).pipe(Effect.map((connector): IntoGatewayNetwork => ({ connect: connector.connect })))
