package engine

import (
	"runtime/debug"

	lib "modernc.org/libquickjs"
)

// Version names the JS engine: QuickJS's release and the module that
// carries it, so an operator can tell which engine a replica runs.
func Version() string {
	v := "QuickJS " + lib.MCONFIG_VERSION
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "modernc.org/libquickjs" {
				return v + " (" + d.Path + " " + d.Version + ")"
			}
		}
	}
	return v
}
