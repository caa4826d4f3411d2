package proxy

import (
	"net/http"
	"net/url"
	"strings"
)

// mode is how the guest handles compression for one response.
type mode string

const (
	modeMirror  mode = "mirror"  // output coding = origin coding (docs/behaviour.md, "Mirror mode")
	modeOffload mode = "offload" // identity out with X-Compress-Hint (docs/behaviour.md, "Offload mode")
)

// modeFor applies "Offload mode" in docs/behaviour.md: offload needs the flag, a platform that delivers
// compression, and an eligible request. The response-side condition (HTML on
// the pipeline route) is checked when the response arrives.
//
// With debug.allow_mode_override a request may force the mode of an
// eligible page with ?__ssatd_compression=identity|mirror (for measuring);
// with it or debug.diagnostics_headers, Trusted Server's
// ?__ts_ssat_compression does the same (tsdiag.go).
func (g *Guest) modeFor(x *exchange, r *http.Request) mode {
	if g.allowOverride && x.eligible {
		switch r.URL.Query().Get(ModeOverrideParam) {
		case "identity":
			return modeOffload
		case "mirror":
			return modeMirror
		}
	}
	if (g.diagnostics || g.allowOverride) && x.eligible {
		if m, ok := tsOverride(r.URL.Query()); ok {
			return m
		}
	}
	if g.offload && x.eligible {
		return modeOffload
	}
	return modeMirror
}

// ModeOverrideParam is the query parameter of debug.allow_mode_override.
const ModeOverrideParam = "__ssatd_compression"

// stripModeOverride removes the override parameter before the origin
// request: it is ssatd's, not the publisher's.
func stripModeOverride(u *url.URL) {
	if !strings.Contains(u.RawQuery, ModeOverrideParam) && !strings.Contains(u.RawQuery, TSModeParam) {
		return
	}
	q := u.Query()
	q.Del(ModeOverrideParam)
	q.Del(TSModeParam)
	u.RawQuery = q.Encode()
}
