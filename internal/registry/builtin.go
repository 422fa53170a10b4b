package registry

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/pml-go/pml/internal/registry/fqdn"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/tools"
)

// Built-in tools are published as "pml.std.<ns>.<action>.<hash>".
const (
	builtinOrg     = "pml"
	builtinProject = "std"
)

// builtinEntry publishes a built-in tool. Its code is a generated stub —
// the TypeScript declaration as a comment and the one call it stands for —
// so it is readable, hashable and runnable like a capability's code.
func builtinEntry(info tools.Info, side routing.Side) (Entry, error) {
	ns, action := tools.Split(info.ID)
	code := builtinCode(info)
	n, integrity := fqdn.ForCode(builtinOrg, builtinProject, ns, action, code)
	if err := n.Validate(); err != nil {
		return Entry{}, fmt.Errorf("built-in tool %s: %w", info.ID, err)
	}
	return Entry{
		Name:        n,
		Type:        TypeCode,
		Routing:     side,
		Description: info.Description,
		Integrity:   integrity,
		Body:        []byte(code),
		Shared:      true,
	}, nil
}

var identRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

func builtinCode(info tools.Info) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// Built-in tool %s of PML.\n", info.ID)
	for line := range strings.SplitSeq(tools.Declaration(info), "\n") {
		b.WriteString("// ")
		b.WriteString(line)
		b.WriteString("\n")
	}
	ns, action := tools.Split(info.ID)
	fmt.Fprintf(&b, "return await mcp%s%s(args);\n", accessor(ns), accessor(action))
	return b.String()
}

// accessor is ".name", or `["na-me"]` when name is not an identifier.
func accessor(name string) string {
	if identRE.MatchString(name) {
		return "." + name
	}
	return fmt.Sprintf("[%q]", name)
}
