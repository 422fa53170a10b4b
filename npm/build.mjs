#!/usr/bin/env node
// Builds the npm packages of pml from a GoReleaser dist directory (README
// "Install", .goreleaser.yaml): one package per platform holding its
// prebuilt binary, limited to that os and cpu, and the launcher (npm/pml),
// which lists them as optional dependencies, esbuild's pattern: npm
// installs the matching one, nothing is downloaded at install time. Each is
// packed with `npm pack` into OUT_DIR; nothing is published.
//
//   node npm/build.mjs DIST_DIR OUT_DIR   (from where GoReleaser ran)
//
// The version is the release's (DIST_DIR/metadata.json); only the
// platforms DIST_DIR has binaries for are packed and listed.
import { execFileSync } from "node:child_process";
import { copyFileSync, chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const [dist, out] = process.argv.slice(2).map((p) => p && resolve(p));
if (!dist || !out) {
  console.error("usage: node npm/build.mjs DIST_DIR OUT_DIR");
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const launcher = JSON.parse(readFileSync(join(here, "pml", "package.json"), "utf8"));
// What GoReleaser writes at the end of a build: a failed or never-run
// release leaves none, which is said in one line (exit 1), not as a stack.
const distJSON = (file) => {
  const path = join(dist, file);
  if (!existsSync(path)) {
    console.error(`npm/build.mjs: no ${path}: build the release first (README "Install": goreleaser release --snapshot --clean), then pass its dist directory`);
    process.exit(1);
  }
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    console.error(`npm/build.mjs: ${path} is not GoReleaser's JSON (${err.message}): build the release again`);
    process.exit(1);
  }
};
const { version } = distJSON("metadata.json");
const artifacts = distJSON("artifacts.json");
const os = { linux: "linux", darwin: "darwin", windows: "win32" };
const cpu = { amd64: "x64", arm64: "arm64" };
const names = { linux: "Linux", darwin: "macOS", win32: "Windows" };

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const pack = (dir) => {
  const file = execFileSync("npm", ["pack", "--silent", "--pack-destination", out], { cwd: dir, encoding: "utf8" }).trim().split("\n").pop();
  return join(out, file);
};

const tarballs = [];
const optional = {};
for (const a of artifacts) {
  if (a.type !== "Binary" || !os[a.goos] || !cpu[a.goarch]) continue;
  const [nodeOS, nodeCPU] = [os[a.goos], cpu[a.goarch]];
  const name = `${launcher.name}-${nodeOS}-${nodeCPU}`;
  const dir = join(out, "src", `${nodeOS}-${nodeCPU}`);
  const exe = nodeOS === "win32" ? "pml.exe" : "pml";
  mkdirSync(join(dir, "bin"), { recursive: true });
  // Paths in artifacts.json are absolute, or relative to where GoReleaser ran.
  copyFileSync(isAbsolute(a.path) ? a.path : resolve(a.path), join(dir, "bin", exe));
  chmodSync(join(dir, "bin", exe), 0o755);
  writeFileSync(join(dir, "package.json"), JSON.stringify({
    name, version,
    description: `The pml binary for ${names[nodeOS]} ${nodeCPU}, run by ${launcher.name}.`,
    os: [nodeOS], cpu: [nodeCPU],
    files: [`bin/${exe}`],
    preferUnplugged: true,
  }, null, 2) + "\n");
  optional[name] = version;
  tarballs.push(pack(dir));
}
if (tarballs.length === 0) {
  console.error(`no pml binaries in ${dist}/artifacts.json`);
  process.exit(1);
}

const dir = join(out, "src", "launcher");
mkdirSync(join(dir, "bin"), { recursive: true });
copyFileSync(join(here, "pml", "bin", "pml.js"), join(dir, "bin", "pml.js"));
chmodSync(join(dir, "bin", "pml.js"), 0o755);
writeFileSync(join(dir, "package.json"), JSON.stringify({ ...launcher, version, optionalDependencies: optional }, null, 2) + "\n");
tarballs.unshift(pack(dir));
console.log(tarballs.join("\n"));
