// Package approval holds the building blocks of human-in-the-loop (HIL)
// execution in the package: the allow/deny/ask permissions of .pml.json, the
// items a person approves and the one approval_required answer that batches
// them, the in-memory store of workflows paused for approval (a map with a
// 5-minute TTL), the replay journal that lets a paused run resume
// without executing any tool twice, BYOK keys from the workspace .env, and the
// record of installed MCP dependencies (.pml/deps.json).
//
// The pieces are independent; the package's execute flow composes them.
package approval
