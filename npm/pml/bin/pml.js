#!/usr/bin/env node
// The npm launcher of pml (README "Install"): it runs the prebuilt binary of
// the platform package npm installed beside it. Every platform package is an
// optional dependency limited to its os and cpu, so npm installs the one
// that matches and downloads nothing at install time.
"use strict";

const { spawn } = require("node:child_process");
const pkg = require("../package.json");

// process.platform and process.arch to the platform packages' suffixes.
const suffixes = {
  "linux x64": "linux-x64",
  "linux arm64": "linux-arm64",
  "darwin x64": "darwin-x64",
  "darwin arm64": "darwin-arm64",
  "win32 x64": "win32-x64",
  "win32 arm64": "win32-arm64",
};

function binaryPath() {
  const key = `${process.platform} ${process.arch}`;
  const suffix = suffixes[key];
  if (!suffix) {
    throw new Error(`no prebuilt pml for ${key}; build it with Go instead: go install github.com/pml-go/pml/cmd/pml@latest`);
  }
  const name = `${pkg.name}-${suffix}`;
  const exe = process.platform === "win32" ? "pml.exe" : "pml";
  try {
    return require.resolve(`${name}/bin/${exe}`);
  } catch {
    throw new Error(`${name}, the optional dependency holding pml for ${key}, is not installed ` +
      "(was it installed with --omit=optional or --no-optional?); install " + pkg.name + " again with optional dependencies");
  }
}

let bin;
try {
  bin = binaryPath();
} catch (e) {
  console.error(`pml: ${e.message}`);
  process.exit(1);
}

// PML_NPM_PACKAGE tells `pml init` it was started this way, so that
// .mcp.json starts `npx -y <package> stdio`: the binary npx ran lives in
// its cache, which does not last.
const child = spawn(bin, process.argv.slice(2), {
  stdio: "inherit",
  env: { ...process.env, PML_NPM_PACKAGE: pkg.name },
  windowsHide: true,
});

// A signal sent to this process alone (kill PID, a client stopping its
// server) reaches pml too; Ctrl-C reaches both already, and pml takes a
// repeated one as the first.
const forward = (sig) => { if (child.exitCode === null) child.kill(sig); };
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(sig, () => forward(sig));

child.on("error", (e) => {
  console.error(`pml: cannot start ${bin}: ${e.message}`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code === null ? 1 : code);
});
