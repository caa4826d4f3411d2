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

// publisherQuery is the one place that decides the query the publisher's
// side sees of a request: the origin request and the page URL bidders get
// (OpenRTB site.page). The mode parameters (ModeOverrideParam,
// TSModeParam) are ssatd's while it reads them (debug.allow_mode_override
// or debug.diagnostics_headers) and are removed then; every other pair is
// kept byte for byte and in its order (url.Values would sort the pairs and
// re-encode them). It runs on the client's raw query, which
// keepClientTarget restored after ReverseProxy's own re-encoding of a query
// holding a ';' (golang.org/issue/25192).
func (g *Guest) publisherQuery(rawQuery string) string {
	if !(g.allowOverride || g.diagnostics) || rawQuery == "" {
		return rawQuery
	}
	var kept []string
	removed := false
	for _, pair := range strings.Split(rawQuery, "&") {
		if isModeParam(pair) {
			removed = true
			continue
		}
		kept = append(kept, pair)
	}
	if !removed {
		return rawQuery
	}
	return strings.Join(kept, "&")
}

// isModeParam reports whether one key=value pair of a query is a mode
// parameter, with its key decoded as url.ParseQuery decodes it (so that
// modeFor, which reads it that way, and the removal agree).
func isModeParam(pair string) bool {
	key, _, _ := strings.Cut(pair, "=")
	if k, err := url.QueryUnescape(key); err == nil {
		key = k
	}
	return key == ModeOverrideParam || key == TSModeParam
}

// publisherRequestURI is the request's path and query as the publisher's
// side sees it (publisherQuery).
func (g *Guest) publisherRequestURI(u *url.URL) string {
	v := *u
	if v.RawQuery = g.publisherQuery(u.RawQuery); v.RawQuery != u.RawQuery {
		v.ForceQuery = false
	}
	return v.RequestURI()
}
