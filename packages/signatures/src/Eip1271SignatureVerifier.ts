/**
 * The SignatureVerifier port for smart-contract wallets as well as keys. A signature made by the key behind the
 * address verifies offline, exactly as in EoaSignatureVerifier. Any other signature is checked on chain through a
 * JSON-RPC endpoint, which covers ERC-1271 wallets and ERC-6492 counterfactual (not yet deployed) ones. Cairn leaves
 * it off unless configured, since it needs an endpoint to trust. An endpoint that cannot answer gives
 * VerifierUnavailable, never "invalid".
 */
import { Effect, Layer, Predicate } from "effect"
import type { EIP1193RequestFn, Transport } from "viem"
import * as EoaSignatureVerifier from "./EoaSignatureVerifier.ts"
import { domain, primaryType, type SignedContent, SignatureVerifier, types, VerifierUnavailable } from "./SignatureVerifier.ts"

export interface Options {
  /** A JSON-RPC endpoint for Ethereum mainnet, the chain (id 1) the typed data names. */
  readonly rpcUrl: string
}

type Viem = typeof import("viem")

/**
 * Parity and Nethermind report a call that failed while executing (a revert among them) as -32015, "VM execution
 * error", where geth says "execution reverted".
 */
const vmExecutionError = -32015

/**
 * A revert is the node's answer that the wallet (or the ERC-6492 validator) rejected the signature. This is viem's
 * own test for one (code 3, or a node message saying so) plus the Parity and Nethermind code.
 */
const isRevert = ({ BaseError, ExecutionRevertedError }: Viem, error: unknown): boolean =>
  error instanceof BaseError &&
  error.walk((cause) =>
    (Predicate.hasProperty(cause, "code") && (cause.code === ExecutionRevertedError.code || cause.code === vmExecutionError)) ||
    (cause instanceof BaseError && ExecutionRevertedError.nodeMessage.test(cause.details.toLowerCase()))
  ) !== null

/**
 * A client whose requests go to `endpoint` and report every failure other than a revert. `verifyTypedData` turns a
 * failed `eth_call` into `false`, so without the report an unreachable endpoint would look like a bad signature.
 */
const reportingClient = (viem: Viem, endpoint: ReturnType<Transport>, onFailure: (error: unknown) => void) =>
  viem.createPublicClient({
    transport: viem.custom({
      request: (args: Parameters<EIP1193RequestFn>[0]) =>
        endpoint.request(args).catch((error: unknown) => {
          if (!isRevert(viem, error)) onFailure(error)
          throw error
        })
    }, { retryCount: 0 }) // the endpoint has already retried what was worth retrying
  })

export const make = (options: Options) =>
  Effect.map(Effect.promise(EoaSignatureVerifier.loadViem), (viem) => {
    const { isAddress, isHex } = viem
    // viem's HTTP transport, with its retries and timeout; its settings do not depend on the chain.
    const endpoint = viem.http(options.rpcUrl)({})
    const verify = Effect.fn("Eip1271SignatureVerifier.verify")(function*(content: SignedContent) {
      if (yield* EoaSignatureVerifier.verify(content)) return true
      const { address, cid, date, signature } = content
      // Nothing on chain can make these valid, so they never cost a request. Contract wallets define their own
      // signature formats (even an empty one), so beyond being whole bytes of hex the length is theirs to judge.
      if (!isAddress(address) || !isHex(signature) || signature.length % 2 !== 0) return false
      // One client per verification, so concurrent verifications never see each other's failures.
      const failures: Array<unknown> = []
      const client = reportingClient(viem, endpoint, (error) => failures.push(error))
      const valid = yield* Effect.tryPromise({
        try: () => client.verifyTypedData({ address, domain, types, primaryType, message: { address, cid, date }, signature }),
        catch: (cause) => new VerifierUnavailable({ cause: failures[0] ?? cause })
      })
      // A "false" that followed a failed request is not the chain's verdict.
      if (!valid && failures.length > 0) return yield* new VerifierUnavailable({ cause: failures[0] })
      return valid
    })
    return SignatureVerifier.of({ verify })
  })

export const layer = (options: Options) => Layer.effect(SignatureVerifier, make(options))
