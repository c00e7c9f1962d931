package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/earshot-voice/earshot/metrics"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// build describes this binary from the linker flag and the VCS stamp.
func build() metrics.Build {
	b := metrics.Build{Version: version, Revision: "unknown"}
	if info, ok := debug.ReadBuildInfo(); ok {
		if b.Version == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			b.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				b.Revision = s.Value
			}
		}
	}
	return b
}

func versionString() string {
	b := build()
	return fmt.Sprintf("earshot %s (revision %s, %s, %s/%s)", b.Version, b.Revision, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
