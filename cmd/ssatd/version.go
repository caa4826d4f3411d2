package main

import (
	"fmt"
	"runtime/debug"
)

// Set at build time with -ldflags "-X main.version=... -X main.commit=...
// -X main.date=...". A build without them (go build, go install) takes the
// commit and its time from the VCS stamp Go records in the binary.
var (
	version = "0.1.0-dev"
	commit  = ""
	date    = ""
)

// versionLine is what `ssatd version` prints: the version, the commit and
// the date, each "unknown" when neither the ldflags nor the build info
// carry it (a -buildvcs=false build outside a checkout).
func versionLine() string {
	c, d := commit, date
	if c == "" || d == "" {
		vc, vd := vcsStamp()
		if c == "" {
			c = vc
		}
		if d == "" {
			d = vd
		}
	}
	return fmt.Sprintf("ssatd %s commit %s date %s", version, orUnknown(c), orUnknown(d))
}

// vcsStamp reads the commit (with "-dirty" for uncommitted changes) and the
// commit time from the build info.
func vcsStamp() (rev, when string) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", ""
	}
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" && dirty {
		rev += "-dirty"
	}
	return rev, when
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
