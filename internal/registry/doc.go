// Package registry is the gateway's registry (docs/protocol.md "Registry"):
// every thing a package may fetch by content-hashed FQDN, scoped per tenant.
//
// Three kinds of entries, each with a registry type:
//
//   - built-in tools, "pml.std.<ns>.<action>.<hash>", type code: a generated
//     TypeScript stub (the tool's declaration as a comment and one line that
//     calls it) hashed like any code;
//   - MCP servers of the gateway config, "pml.mcp.<name>.server.<hash>":
//     type stdio (install metadata) for a server packages install and run
//     themselves, type http (proxy metadata) for one the gateway hosts;
//   - capabilities, "<org>.<project>.<ns>.<action>.<hash>", type code: code a
//     tenant ran successfully, saved by the gateway (procedural memory).
//
// Built-ins and servers come from configuration and are the same for every
// tenant; capabilities come from the store and a viewer sees its own
// project's, its org's with visibility org or public, and everyone's public
// ones. Only the current version of a name is served: the hash of an older
// one answers hash_mismatch with the current FQDN.
package registry
