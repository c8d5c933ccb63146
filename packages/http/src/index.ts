/** Cairn's HTTP surface: routes and the layer that serves them all. */
export * as HealthRoutes from "./HealthRoutes.ts"
export * as CairnHttp from "./CairnHttp.ts"
export * as OpenApi from "./OpenApi.ts"
export * as RouteCatalog from "./RouteCatalog.ts"
export * as HttpMetrics from "./HttpMetrics.ts"
export * as MetricsRoutes from "./MetricsRoutes.ts"
export * as RequestId from "./RequestId.ts"
export * as Tracing from "./Tracing.ts"
