/** The userland punycode package (Node's built-in `punycode` is deprecated); only what Name.ts uses. */
declare module "punycode/punycode.es6.js" {
  export function toUnicode(input: string): string
  export function toASCII(input: string): string
}
