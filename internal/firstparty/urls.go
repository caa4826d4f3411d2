package firstparty

import (
	"net/url"
	"strings"
	"unicode"
)

// toAbs is upstream's to_abs (core/creative.rs:53-74): an absolute http(s)
// URL as it is, a protocol-relative one under https, anything else (relative
// paths, data:, javascript:, mailto: ...) or an excluded host not at all.
func toAbs(excludes []string, u string) (string, bool) {
	t := strings.TrimSpace(u)
	if t == "" {
		return "", false
	}
	var abs string
	switch lower := strings.ToLower(t); {
	case strings.HasPrefix(t, "//"):
		abs = "https:" + t
	case strings.HasPrefix(lower, "http://"), strings.HasPrefix(lower, "https://"):
		abs = t
	default:
		return "", false
	}
	if isExcluded(excludes, abs) {
		return "", false
	}
	return abs, true
}

func (f *Family) toAbs(u string) (string, bool) { return toAbs(f.cfg.ExcludeDomains, u) }

func (f *Family) excluded(abs string) bool { return isExcluded(f.cfg.ExcludeDomains, abs) }

// isExcluded is Rewrite::is_excluded (core/settings.rs:531-552): the URL's
// host equals a listed domain, or "*.domain" matches it or a subdomain.
func isExcluded(excludes []string, abs string) bool {
	if len(excludes) == 0 {
		return false
	}
	u, err := url.Parse(abs)
	if err != nil {
		return false
	}
	host := strings.ToLower(u.Hostname())
	for _, d := range excludes {
		if suffix, ok := strings.CutPrefix(d, "*."); ok {
			if host == suffix || strings.HasSuffix(host, "."+suffix) {
				return true
			}
		} else if host == d {
			return true
		}
	}
	return false
}

// rewriteStyleURLs is rewrite_style_urls (core/creative.rs:79-134): each
// url(...) whose value, trimmed of white space and one pair of quotes, is
// absolute becomes a signed proxy URL; the quotes are kept.
func (c *creativeCtx) rewriteStyleURLs(style string) string {
	lower := strings.ToLower(style)
	var out strings.Builder
	write, scan := 0, 0
	for {
		off := strings.Index(lower[scan:], "url(")
		if off < 0 {
			break
		}
		open := scan + off + 4
		out.WriteString(style[write:open])
		c2 := strings.IndexByte(lower[open:], ')')
		if c2 < 0 {
			out.WriteString(style[open:])
			return out.String()
		}
		closeAt := open + c2
		s, e := open, closeAt
		for s < closeAt && isASCIISpace(style[s]) {
			s++
		}
		for e > s && isASCIISpace(style[e-1]) {
			e--
		}
		qs, qe, quote := s, e, byte(0)
		if s < e && (style[s] == '"' || style[s] == '\'') {
			quote, qs = style[s], s+1
			if e > s+1 {
				qe = e - 1
			}
		}
		val := style[qs:qe]
		if abs, ok := toAbs(c.excludes, val); ok {
			val = c.proxyURL(abs)
		}
		if quote != 0 {
			out.WriteByte(quote)
			out.WriteString(val)
			out.WriteByte(quote)
		} else {
			out.WriteString(val)
		}
		out.WriteByte(')')
		write = closeAt + 1
		scan = write
	}
	out.WriteString(style[write:])
	return out.String()
}

// isASCIISpace is Rust's u8::is_ascii_whitespace: no vertical tab.
func isASCIISpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// splitSrcset is split_srcset_candidates (core/creative.rs:232-270): commas
// separate candidates, except the first comma of a candidate that starts
// with data: and has no white space before it.
func splitSrcset(s string) []string {
	var items []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] != ',' {
			continue
		}
		trimmed := strings.TrimLeftFunc(s[start:i], unicode.IsSpace)
		if strings.HasPrefix(strings.ToLower(trimmed), "data:") && !strings.ContainsAny(trimmed, " \t\n\f\r") {
			continue
		}
		items = append(items, s[start:i])
		i++
		for i < len(s) && isASCIISpace(s[i]) {
			i++
		}
		start = i
		i-- // the loop's i++ lands on the next candidate's first byte
	}
	if start < len(s) {
		items = append(items, s[start:])
	}
	return items
}

// rewriteSrcset is rewrite_srcset (core/creative.rs:276-298): absolute
// candidates proxied, descriptors kept, candidates joined with ", ".
func (c *creativeCtx) rewriteSrcset(srcset string) string {
	var out []string
	for _, item := range splitSrcset(srcset) {
		fields := strings.Fields(item)
		if len(fields) == 0 {
			continue
		}
		u, desc := fields[0], strings.Join(fields[1:], " ")
		if abs, ok := toAbs(c.excludes, u); ok {
			u = c.proxyURL(abs)
		}
		if desc != "" {
			u += " " + desc
		}
		out = append(out, u)
	}
	return strings.Join(out, ", ")
}
