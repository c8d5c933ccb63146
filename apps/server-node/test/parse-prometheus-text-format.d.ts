/** The npm package ships no types: what the tests use of it. */
declare module "parse-prometheus-text-format" {
  const parse: (text: string) => ReadonlyArray<unknown>
  export default parse
}
