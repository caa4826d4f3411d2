package proxy

import (
	"net/http"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/csp"
	"github.com/ssatd/ssatd/internal/rewrite"
)

// cspHeaders are the header fields that carry a page's policies (CSP3, the
// Content-Security-Policy and Content-Security-Policy-Report-Only header fields). A report-only policy blocks nothing, but a script it
// allows by hash and that the rewrite changed would be reported as a
// violation on every view, so both are read alike.
var cspHeaders = []string{"Content-Security-Policy", "Content-Security-Policy-Report-Only"}

// readPagePolicy reads a page's policies from its response header
// (docs/behaviour.md, "Content Security Policy") before the header goes
// out: the nonce the injected scripts will carry, the inline content the
// rewrite must keep, and, where a policy would block the injected inline
// scripts and has no nonce for them, the loader's hash added to it in the
// header itself. Text responses get no injection and keep their scripts'
// bytes anyway (no script runs from a JSON body).
func (g *Guest) readPagePolicy(h http.Header, x *exchange) {
	if !g.readsPagePolicy(x) {
		return
	}
	pending := csp.PendingBundle
	if x.eligible {
		pending |= csp.PendingInline // the ad-slots and bids scripts
	}
	for _, k := range cspHeaders {
		if vals := h[k]; len(vals) > 0 && x.csp.ReadHeader(vals, pending) {
			x.cspHeaderChanged = true
		}
	}
	x.cspOn = true
}

// readsPagePolicy says whether x's page gets the Content Security Policy
// rules: an HTML page, unless csp is ignored.
func (g *Guest) readsPagePolicy(x *exchange) bool {
	return x.text == textHTML && !g.ignoreCSP
}

// notePolicy logs and counts what a page's policies made the rewrite do
// (metrics.CSPRules).
func (g *Guest) notePolicy(path string, st *rewrite.Stats) {
	pg := &st.CSP
	if !pg.On() {
		return
	}
	var rules []string
	if pg.Nonce != "" && st.HeadFound {
		rules = append(rules, "nonce")
	}
	if pg.Loader {
		rules = append(rules, "loader_hash")
	}
	if st.CSPKept > 0 {
		rules = append(rules, "kept")
	}
	if pg.InlineBlocked {
		rules = append(rules, "inline_blocked")
	}
	if pg.BundleBlocked {
		rules = append(rules, "bundle_blocked")
	}
	for _, r := range rules {
		g.metrics.CSPPage(r)
	}
	if len(rules) == 0 {
		return
	}
	lvl := zap.InfoLevel
	if pg.InlineBlocked || pg.BundleBlocked {
		lvl = zap.WarnLevel
	}
	g.log.Log(lvl, "content security policy", zap.String("path", path), zap.Strings("rules", rules),
		zap.Int("kept", st.CSPKept), zap.Int("meta_policies_changed", st.CSPMetaChanged))
}
