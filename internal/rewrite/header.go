package rewrite

// URL rewrites the origin URLs in a value outside the page, such as a
// response header (Location, Content-Location, Refresh, Link), by the rules
// of an href attribute (docs/behaviour.md, "URL rewriting"): a scheme or
// protocol-relative URL naming originHost, or a value that starts with the
// bare host, is pointed at scheme://requestHost. It reports whether
// anything changed.
func URL(v, originHost, requestHost, scheme string) (string, bool) {
	if originHost == "" {
		return v, false
	}
	var h hostRewriter
	h.reset(originHost, requestHost, scheme)
	return h.rewriteString(v, kindURL)
}
