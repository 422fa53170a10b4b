package local

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// What the filesystem tools guard, beyond confinement to the workspace (see
// the docs/security.md "Trust: approvals and secrets"). Names are compared without
// regard to case, so a case-insensitive filesystem cannot be used to spell
// a protected name differently; on a case-sensitive one the stricter reading
// only refuses a few oddly named files.

// controlDirs and controlFiles are PML's own configuration and state: the
// permissions, the lockfile, the approved dependencies, the keys. A tool
// that could write them could grant itself anything, so no tool writes them,
// whatever the permissions say; a person edits them by hand.
var (
	controlDirs  = []string{".pml"}
	controlFiles = []string{".pml.json", ".mcp.json", ".env", ".env.*"}
)

// hookDirs and hookFiles hold what other programs run on their own (git
// hooks, husky, direnv, pre-commit): a write there is code execution later,
// so each such write asks, even when writes are allowed.
var (
	hookDirs  = []string{".git", ".husky", ".githooks"}
	hookFiles = []string{".envrc", ".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml"}
)

// secretDirs and secretFiles hold keys and credentials: reading one asks
// every time, even when read_file is allowed. A public key (*.pub) is not a
// secret.
var (
	secretDirs  = []string{".pml", ".ssh", ".gnupg", ".aws", ".docker", ".kube", ".azure"}
	secretFiles = []string{
		".env", ".env.*", "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore",
		"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
		".npmrc", ".pypirc", ".netrc", "_netrc", ".pgpass", ".git-credentials", ".htpasswd", ".dockercfg",
		"*credentials*.json", "service-account*.json",
	}
)

// SecretPatterns returns the documented patterns of secret files: a name
// ending in "/" is a directory whose whole content is secret.
func SecretPatterns() []string {
	out := make([]string, 0, len(secretDirs)+len(secretFiles))
	for _, d := range secretDirs {
		out = append(out, d+"/")
	}
	return append(out, secretFiles...)
}

// Kinds of NeedsApproval.
const (
	KindSecretRead = "secret_read" // reading (or moving) a key or credential file
	KindHookWrite  = "hook_write"  // writing where other programs run code from
)

// NeedsApproval is the cause of the PERMISSION_DENIED a filesystem tool
// returns for an operation a person must approve call by call. The
// package's permission gate turns it into an approval for that one call and
// runs the call again with WithApproval.
type NeedsApproval struct {
	Kind   string
	Path   string // workspace-relative, symlinks resolved
	Reason string
}

func (n *NeedsApproval) Error() string { return n.Reason }

type approvalKey struct{}

// WithApproval returns ctx carrying whether a person approved this one call.
// Only the package's permission gate sets it; code in the sandbox cannot.
func WithApproval(ctx context.Context, approved bool) context.Context {
	return context.WithValue(ctx, approvalKey{}, approved)
}

func approved(ctx context.Context) bool {
	ok, _ := ctx.Value(approvalKey{}).(bool)
	return ok
}

// spellings are the workspace-relative forms of a place that a rule must
// look at: as written (cleaned), with its directory resolved, and fully
// resolved. A symlink at .pml, or one pointing to .pml.json, is caught by
// whichever form names the protected entry.
func (pl place) spellings() []string {
	return slices.Compact([]string{pl.lexRel, pl.linkRel, pl.rel})
}

// matchAny reports whether any spelling has a component in dirs (for a
// directory, itself included) or a last component matching one of files.
func matchAny(spellings, dirs, files []string) bool {
	for _, s := range spellings {
		if s == "" || s == "." {
			continue
		}
		parts := strings.Split(strings.ToLower(filepath.ToSlash(s)), "/")
		for _, p := range parts {
			if slices.Contains(dirs, p) {
				return true
			}
		}
		base := parts[len(parts)-1]
		if strings.HasSuffix(base, ".pub") {
			continue
		}
		for _, pat := range files {
			if ok, _ := path.Match(pat, base); ok {
				return true
			}
		}
	}
	return false
}

// checkWrite refuses writes to PML's control files and asks for writes to
// hooks; it runs before anything on disk changes.
func checkWrite(ctx context.Context, arg string, pl place) error {
	sp := pl.spellings()
	if matchAny(sp, controlDirs, controlFiles) {
		return denied(arg, "it is one of PML's own files (%s), which tools never write whatever the permissions say; "+
			"edit it by hand (to allow a tool for good, answer an approval with \"always\")", strings.Join(append(slices.Clone(controlFiles), ".pml/"), ", "))
	}
	if !approved(ctx) && matchAny(sp, hookDirs, hookFiles) {
		return needsApproval(arg, KindHookWrite, pl,
			"writing there changes what git or other tools run on their own, so each such write needs a person's approval")
	}
	return nil
}

// checkSecretRead asks before a key or credential file leaves the disk.
func checkSecretRead(ctx context.Context, arg string, pl place) error {
	if approved(ctx) || !matchAny(pl.spellings(), secretDirs, secretFiles) {
		return nil
	}
	return needsApproval(arg, KindSecretRead, pl,
		"it holds keys or credentials, so each read needs a person's approval")
}

func needsApproval(arg, kind string, pl place, reason string) error {
	n := &NeedsApproval{Kind: kind, Path: filepath.ToSlash(pl.rel), Reason: fmt.Sprintf("%s: %s", filepath.ToSlash(pl.rel), reason)}
	e := denied(arg, "%s", reason)
	e.Err = n
	return e.With("approval", kind)
}
