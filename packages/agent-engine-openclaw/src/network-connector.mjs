// Cairn's hand inside an agent's network namespace (AgentNetwork.ts, decision 0043). Started by Cairn with `nsenter
// --net=…`, outside the agent's PID namespace, with an IPC channel to Cairn; it exits when the channel closes.
//
// - `{id, port}` from Cairn: connects to 127.0.0.1:<port> inside the namespace and hands the connected socket to
//   Cairn (SCM_RIGHTS over the channel): Cairn then talks to the gateway or app directly, with no copy in between.
//   Answers `{id, ok: false, code}` when the connection fails.
// - argv[2], a JSON list of `{host, port}` (AGENT_EGRESS_ALLOW): on `{listen: true}` (once Cairn brought the
//   namespace's loopback up), listens on each inside the namespace and hands every accepted connection to Cairn
//   (`{egress: index}`), which connects it to the host's service. `{ready: true}` once all listen, before the agent's
//   first process runs; `{failed: message}` when one cannot.
// `{running: true}` at start: when Cairn runs it with `unshare --net`, its namespace exists from then on.
//
import * as Net from "node:net"

const send = (message, handle) => {
  try {
    process.send(message, handle, () => handle?.destroy())
  } catch {
    handle?.destroy()
  }
}

process.on("message", (message) => {
  if (typeof message?.id !== "number" || !Number.isInteger(message?.port)) return
  const socket = Net.connect({ port: message.port, host: "127.0.0.1" })
  socket.pause()
  let answered = false
  socket.once("connect", () => {
    answered = true
    send({ id: message.id, ok: true }, socket)
  })
  socket.on("error", (error) => {
    if (answered) return
    answered = true
    send({ id: message.id, ok: false, code: error.code ?? String(error) })
  })
})
process.on("disconnect", () => process.exit(0))

const egress = JSON.parse(process.argv[2] ?? "[]")
const listen = () => {
  let listening = 0
  if (egress.length === 0) send({ ready: true })
  egress.forEach(({ host, port }, index) => {
    const server = Net.createServer({ pauseOnConnect: true }, (socket) => send({ egress: index }, socket))
    server.once("error", (error) => send({ failed: `${host}:${port}: ${error.message}` }))
    server.listen(port, host, () => {
      if (++listening === egress.length) send({ ready: true })
    })
  })
}
process.on("message", (message) => {
  if (message?.listen === true) listen()
})
send({ running: true })
