// node:fs plus a globSync that refuses: the server scenarios never call it,
// and a command that does must run on Node.js 22.
export * from "node:fs";
export { default } from "node:fs";

export function globSync() {
  throw new Error("fs.globSync needs Node.js 22 or later; run this conformance command on Node.js 22");
}
