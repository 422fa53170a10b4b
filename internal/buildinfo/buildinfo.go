// Package buildinfo says which build of pml is running: `pml version`,
// GET /healthz and the pml_build_info metric (README "Commands").
package buildinfo

import (
	"runtime"
	"runtime/debug"

	"github.com/pml-go/pml/internal/sandbox/engine"
	"github.com/pml-go/pml/internal/wire"
)

// Set at link time by release builds (README "Commands", pml version;
// .goreleaser.yaml): -ldflags "-X github.com/pml-go/pml/internal/buildinfo.version=…
// -X ….commit=… -X ….date=…".
// Never written at run time.
var (
	version = ""
	commit  = ""
	date    = ""
)

// Info is one build's identity.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	BuildDate string `json:"build_date"`
	GoVersion string `json:"go_version"`
	Engine    string `json:"engine"`
}

// Read returns this binary's build: what the linker was given, else what
// the Go toolchain stamped (the VCS revision and time, when the build
// recorded them), else "unknown".
func Read() Info {
	in := Info{Version: version, Commit: commit, BuildDate: date, GoVersion: runtime.Version(), Engine: engine.Version()}
	if in.Version == "" {
		in.Version = wire.Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && in.Commit == "":
				in.Commit = s.Value
			case s.Key == "vcs.time" && in.BuildDate == "":
				in.BuildDate = s.Value
			case s.Key == "vcs.modified" && s.Value == "true" && in.Commit != "" && commit == "":
				in.Commit += "-dirty"
			}
		}
	}
	if in.Commit == "" {
		in.Commit = "unknown"
	}
	if in.BuildDate == "" {
		in.BuildDate = "unknown"
	}
	return in
}
