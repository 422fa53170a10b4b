// Module resolution hook (see node20-register.mjs): the conformance
// package's bare "fs" import resolves to node20-fs.mjs; every other
// import, node:fs included, resolves as usual.
const shim = new URL("./node20-fs.mjs", import.meta.url).href;

export async function resolve(specifier, context, next) {
  if (specifier === "fs" && context.parentURL?.includes("/@modelcontextprotocol/conformance/")) {
    return { url: shim, shortCircuit: true };
  }
  return next(specifier, context);
}
