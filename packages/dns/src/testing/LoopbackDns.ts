/**
 * A real DNS server on loopback for tests (dns2, UDP on an ephemeral port): it answers TXT questions from a zone the
 * test edits (`setTxt`, `clear`), NXDOMAIN for names it does not hold, and can be told to stay silent (`mute`) to
 * stand for an unreachable server. `@cairn/dns/testing`.
 */
import dns2 from "dns2"

export interface LoopbackDns {
  /** `127.0.0.1:<port>`, for `DNS_SERVERS` / `NodeDns.layer({ servers })`. */
  readonly server: string
  readonly setTxt: (name: string, records: ReadonlyArray<string | ReadonlyArray<string>>) => void
  readonly clear: (name: string) => void
  /** Stops answering (every question times out) or answers again. */
  readonly mute: (muted: boolean) => void
  /** How many questions it was asked, by name. */
  readonly asked: (name: string) => number
  readonly close: () => Promise<void>
}

const { Packet } = dns2

export const start = async (): Promise<LoopbackDns> => {
  const zone = new Map<string, ReadonlyArray<string | ReadonlyArray<string>>>()
  const questions = new Map<string, number>()
  let muted = false
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const [question] = request.questions
      if (question === undefined || muted) return
      const name = question.name.toLowerCase().replace(/\.$/, "")
      questions.set(name, (questions.get(name) ?? 0) + 1)
      const response = Packet.createResponseFromRequest(request)
      const records = zone.get(name)
      if (records === undefined) {
        response.header.rcode = Packet.RCODE.NXDOMAIN
      } else if (question.type === Packet.TYPE.TXT) {
        for (const record of records) {
          response.answers.push({
            name: question.name,
            type: Packet.TYPE.TXT,
            class: Packet.CLASS.IN,
            ttl: 1,
            data: typeof record === "string" ? record : [...record]
          } as never)
        }
      }
      void send(response)
    }
  })
  const addresses = await server.listen({ udp: { port: 0, address: "127.0.0.1" } })
  const port = addresses.udp!.port
  return {
    server: `127.0.0.1:${port}`,
    setTxt: (name, records) => zone.set(name.toLowerCase(), records),
    clear: (name) => zone.delete(name.toLowerCase()),
    mute: (value) => {
      muted = value
    },
    asked: (name) => questions.get(name.toLowerCase()) ?? 0,
    close: () => server.close().then(() => undefined)
  }
}
