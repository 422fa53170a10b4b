package gateway

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/sanitize"
	"github.com/pml-go/pml/internal/store"
)

// shareable checks what another project would see of c before it is shared
// (visibility org or public) with the rules that keep secrets and personal
// data out of traces: its name, description, code (line by line, then the
// strings it builds from constants, analysis.Folded) and its parameters'
// names and descriptions. A break is INVALID_REQUEST naming the
// rule and where, and c stays as it was: the owner passes such a value as
// an argument (args) instead, or lets a run with another value make it a
// parameter (docs/security.md "Tenants and names"). Its output schema needs
// no check here: another project sees it without data keys (registry.ViewFor).
func shareable(c store.Capability) error {
	san := sanitize.New(nil)
	flag := san.Flag
	refuse := func(where, rule string) error {
		return pmlerr.New(pmlerr.InvalidRequest,
			"cannot share: %s holds %s, which another project would see; pass it as an argument (args) instead, then share it", where, rule).
			With("rule", rule).With("where", where)
	}
	if rule := flag(c.Namespace + ":" + c.Action); rule != "" {
		return refuse("the name", rule)
	}
	if rule := flag(c.Description); rule != "" {
		return refuse("the description", rule)
	}
	for i, line := range strings.Split(c.Code, "\n") {
		if rule := flag(line); rule != "" {
			return refuse(fmt.Sprintf("line %d of the code", i+1), rule)
		}
	}
	if where, rule := foldedRule(san, c.Code); rule != "" {
		return refuse(where, rule)
	}
	var args struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(c.ArgsSchema, &args)
	names := make([]string, 0, len(args.Properties))
	for name := range args.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if rule := flag(name + " " + args.Properties[name].Description); rule != "" {
			return refuse(fmt.Sprintf("parameter %q", name), rule)
		}
	}
	return nil
}

// foldedRule names the first rule a string that code builds from constants
// breaks, and where: `"sk_live_" + "51H…"`, `${user}@corp.example`,
// `["alice", "smith"].join(".")`, `String.fromCharCode(…)` (docs/security.md
// "What another project sees of a shared capability"). The secret rules see
// each constant run of such a string; the personal-data rules see it whole,
// its other parts written as a placeholder (analysis.Folded). Code that does
// not analyse is left to the line checks: it cannot run either.
func foldedRule(san *sanitize.Sanitizer, code string) (where, rule string) {
	folded, err := analysis.Fold(code)
	if err != nil {
		return "", ""
	}
	for _, f := range folded {
		where := fmt.Sprintf("line %d of the code (a string built from parts)", f.Line)
		for _, p := range f.Parts {
			if san.HasSecret(p) {
				return where, "a secret"
			}
		}
		if rule := san.FlagPersonal(f.Text); rule != "" {
			return where, rule
		}
	}
	return "", ""
}
