// Lets the conformance suite (built for Node.js 22) start on Node.js 20:
// its CLI imports fs.globSync, new in Node.js 22, which only its
// tier-check command calls. Loaded with `node --import` when fs.globSync
// is missing; on Node.js 22 and later it does nothing.
import fs from "node:fs";
import { register } from "node:module";

if (typeof fs.globSync !== "function") register("./node20-hooks.mjs", import.meta.url);
