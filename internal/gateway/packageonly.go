package gateway

import (
	"strings"

	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/pmlerr"
)

// packageOnlyError is CLIENT_TOOLS_REQUIRE_PACKAGE for code sent to the
// gateway directly that only the package may run. It says why: tools that
// live on the user's machine, or a tool reached by a computed name (mcp[x]),
// which no analysis can prove stays on server tools.
func packageOnlyError(an *analysis.Analysis, clientTools []string) error {
	var why []string
	if an.Dynamic {
		why = append(why, "reaches a tool by a computed name (mcp[x]), which cannot be checked before it runs")
	}
	if len(clientTools) > 0 {
		why = append(why, "uses tools that must run on your machine ("+strings.Join(clientTools, ", ")+")")
	}
	return pmlerr.New(pmlerr.ClientToolsRequirePackage, "this code %s, so it must run in the PML package; call it through the package. Install: %s",
		strings.Join(why, " and "), InstallCommand).
		With("client_tools", clientTools).With("dynamic", an.Dynamic).With("install_command", InstallCommand)
}
