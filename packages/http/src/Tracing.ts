/**
 * OpenTelemetry traces of the requests Cairn serves, through Effect's tracer and its OTLP/HTTP exporter
 * (`effect/observability` OtlpTracer), on when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`)
 * is set. Off otherwise, and then no span is made at all (`References.TracerEnabled` false): a span per request that
 * nothing exports is pure cost (docs/performance.md). The standard variables apply: `OTEL_SERVICE_NAME` (cairn),
 * `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf`, or `http/json`), `OTEL_EXPORTER_OTLP_HEADERS`,
 * `OTEL_BSP_SCHEDULE_DELAY` (ms between exports, 5000), `OTEL_SDK_DISABLED`, `OTEL_TRACES_EXPORTER` (`none` for off).
 */
import { Config, Duration, Effect, Layer, Option, References, Schema } from "effect"
import { FetchHttpClient } from "effect/http"
import { OtlpSerialization, OtlpTracer } from "effect/observability"

export interface Settings {
  /** Where spans are POSTed: the traces endpoint, or `<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces`. */
  readonly url: string
  readonly protocol: "http/protobuf" | "http/json"
  readonly serviceName: string
  readonly headers: Record<string, string> | undefined
  readonly exportInterval: Duration.Duration
}

const tracesUrl = Config.String("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").pipe(
  Config.orElse(() =>
    Config.String("OTEL_EXPORTER_OTLP_ENDPOINT").pipe(Config.map((base) => `${base.replace(/\/+$/, "")}/v1/traces`))
  ),
  Config.option
)

/** `key=value,key2=value2`, values percent-encoded, as the OpenTelemetry specification writes headers. */
const parseHeaders = (text: string): Record<string, string> =>
  Object.fromEntries(
    text.split(",").map((pair) => pair.trim()).filter((pair) => pair !== "").map((pair) => {
      const at = pair.indexOf("=")
      return [pair.slice(0, at).trim(), decodeURIComponent(pair.slice(at + 1).trim())]
    })
  )

/** The exporter's settings, or none when tracing is off. */
export const settings: Config.Config<Option.Option<Settings>> = Config.all({
  url: tracesUrl,
  disabled: Config.Boolean("OTEL_SDK_DISABLED").pipe(Config.withDefault(false)),
  exporter: Config.String("OTEL_TRACES_EXPORTER").pipe(Config.withDefault("otlp")),
  protocol: Config.Literals(["http/protobuf", "http/json"], "OTEL_EXPORTER_OTLP_PROTOCOL").pipe(
    Config.withDefault("http/protobuf" as const)
  ),
  serviceName: Config.String("OTEL_SERVICE_NAME").pipe(Config.withDefault("cairn")),
  headers: Config.option(Config.String("OTEL_EXPORTER_OTLP_HEADERS")),
  delayMs: Config.schema(Schema.NumberFromString.pipe(Schema.check(Schema.isInt(), Schema.isGreaterThan(0))), "OTEL_BSP_SCHEDULE_DELAY").pipe(
    Config.withDefault(5000)
  )
}).pipe(Config.map(({ delayMs, disabled, exporter, headers, protocol, serviceName, url }) =>
  Option.isNone(url) || disabled || !exporter.split(",").map((e) => e.trim()).includes("otlp")
    ? Option.none()
    : Option.some({
      url: url.value,
      protocol,
      serviceName,
      headers: Option.match(headers, { onNone: () => undefined, onSome: parseHeaders }),
      exportInterval: Duration.millis(delayMs)
    })
))

/** The OTLP tracer with tracing on, or tracing off; for the layer that serves requests. */
export const layer = Layer.unwrap(Effect.map(
  settings,
  Option.match({
    onNone: () => Layer.succeed(References.TracerEnabled, false),
    onSome: (s) =>
      OtlpTracer.layer({
        url: s.url,
        resource: { serviceName: s.serviceName },
        headers: s.headers,
        exportInterval: s.exportInterval
      }).pipe(
        Layer.provide(s.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
        Layer.provide(FetchHttpClient.layer),
        Layer.merge(Layer.succeed(References.TracerEnabled, true))
      )
  })
))
