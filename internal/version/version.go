// Package version holds the build's version, stamped at link time:
//
//	go build -ldflags "-X github.com/yardmaster-io/yardmaster/internal/version.Version=v0.1.0"
package version

import "runtime/debug"

// Version is the release version; "dev" for an unstamped build.
var Version = "dev"

// String returns the version and, when the toolchain recorded it, the
// commit the binary was built from.
func String() string {
	v := Version
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " (" + s.Value[:12] + ")"
			}
		}
	}
	return v
}
