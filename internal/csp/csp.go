// Package csp reads a page's Content Security Policy (W3C CSP Level 3) for
// what ssatd's rewrite must respect (docs/behaviour.md, "Content Security
// Policy"): the nonce its injected scripts carry, the inline content a
// policy allows by hash and that the rewrite must therefore leave byte for
// byte, and where the constant hash of its loader script must be added so
// that its injected inline scripts run.
//
// Only what those decisions need is parsed: directive names and source
// expressions, as CSP3's "parse a serialized CSP" splits them.
// A policy is never rewritten but for the one source expression added to
// one directive, so that everything else the publisher wrote stays as it is.
package csp

import (
	"strings"
)

// Kind is a kind of inline content a policy governs (CSP3, "get the
// effective directive for inline checks").
type Kind uint8

const (
	ScriptElem Kind = iota // an inline <script> element
	ScriptAttr             // an event-handler attribute
	StyleElem              // an inline <style> element
	StyleAttr              // a style attribute
	kinds
)

// fallbacks is each kind's directive fallback list (CSP3,
// "get the effective directive for inline checks" and "directive
// fallback list"): the first directive of the list that a policy has
// governs the kind.
var fallbacks = [kinds][3]string{
	ScriptElem: {"script-src-elem", "script-src", "default-src"},
	ScriptAttr: {"script-src-attr", "script-src", "default-src"},
	StyleElem:  {"style-src-elem", "style-src", "default-src"},
	StyleAttr:  {"style-src-attr", "style-src", "default-src"},
}

// directive is one directive of a policy: its name (lower case), its
// source expressions and where its value ends in the policy's text, which
// is where a source expression is added.
type directive struct {
	name    string
	sources []string
	end     int
}

// policy is one parsed policy; raw is its text.
type policy struct {
	raw  string
	dirs []directive
}

// parsePolicy parses one serialized policy (CSP3, "parse a serialized
// CSP"): directives are separated by ';', a directive's name is its first
// token, in any ASCII case; of two directives with one name the first
// counts. Only the directives of the fallback lists are kept: no other
// decides anything here, and keeping every name made a policy of many
// distinct names (a megabyte of "d1;d2;…" in a header or a <meta>)
// quadratic to read, each name compared with all before it.
func parsePolicy(raw string) policy {
	p := policy{raw: raw}
	start := 0
	for start <= len(raw) {
		end := strings.IndexByte(raw[start:], ';')
		if end < 0 {
			end = len(raw)
		} else {
			end += start
		}
		tokens := strings.FieldsFunc(raw[start:end], isASCIISpace)
		if len(tokens) > 0 {
			name := strings.ToLower(tokens[0])
			if isGoverning(name) && p.directive(name) == nil {
				valueEnd := strings.TrimRightFunc(raw[:end], isASCIISpaceRune)
				p.dirs = append(p.dirs, directive{name: name, sources: tokens[1:], end: len(valueEnd)})
			}
		}
		start = end + 1
	}
	return p
}

// isGoverning reports whether name (lower case) is on a fallback list:
// at most len(fallbacks)*3 directives are kept per policy.
func isGoverning(name string) bool {
	for k := range fallbacks {
		for _, n := range fallbacks[k] {
			if n == name {
				return true
			}
		}
	}
	return false
}

func isASCIISpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\f' || r == '\r' }

func isASCIISpaceRune(r rune) bool { return isASCIISpace(r) }

func (p *policy) directive(name string) *directive {
	for i := range p.dirs {
		if p.dirs[i].name == name {
			return &p.dirs[i]
		}
	}
	return nil
}

// effective is the directive that governs k, or nil when none does and
// the policy does not restrict k at all.
func (p *policy) effective(k Kind) *directive {
	for _, name := range fallbacks[k] {
		if d := p.directive(name); d != nil {
			return d
		}
	}
	return nil
}

// keyword reports whether the list holds the keyword source kw ("'self'",
// lower case), which matches in any ASCII case (CSP3, "source lists").
func (d *directive) keyword(kw string) bool {
	for _, s := range d.sources {
		if strings.EqualFold(s, kw) {
			return true
		}
	}
	return false
}

// hasHash reports whether the list holds a hash-source (CSP3, "source lists":
// 'sha256-…', 'sha384-…' or 'sha512-…').
func (d *directive) hasHash() bool {
	for _, s := range d.sources {
		if _, ok := hashValue(s); ok {
			return true
		}
	}
	return false
}

func hashValue(s string) (string, bool) {
	if len(s) < len("'sha256-'") || s[0] != '\'' || s[len(s)-1] != '\'' {
		return "", false
	}
	for _, alg := range []string{"sha256-", "sha384-", "sha512-"} {
		if len(s) > len(alg)+2 && strings.EqualFold(s[1:1+len(alg)], alg) {
			return s[1+len(alg) : len(s)-1], true
		}
	}
	return "", false
}

// allowsLoader reports whether the list holds the loader's hash-source
// already: the algorithm in any case, the digest exactly (CSP3,
// "does element match source list for type and source", compares the
// base64 values as they are).
func (d *directive) allowsLoader() bool {
	want := LoaderHash[len("sha256-"):]
	for _, s := range d.sources {
		if v, ok := hashValue(s); ok && v == want && strings.EqualFold(s[1:len("'sha256-")], "sha256-") {
			return true
		}
	}
	return false
}

// nonces are the list's nonce-source values that are valid base64-values
// (CSP3, "source lists": ALPHA, DIGIT, '+', '/', '-', '_', then at most two '='),
// so that one can be written into a double-quoted attribute as it is.
func (d *directive) nonces() []string {
	var out []string
	for _, s := range d.sources {
		if n, ok := nonceValue(s); ok {
			out = append(out, n)
		}
	}
	return out
}

func nonceValue(s string) (string, bool) {
	const pre = "'nonce-"
	if len(s) <= len(pre)+1 || s[len(s)-1] != '\'' || !strings.EqualFold(s[:len(pre)], pre) {
		return "", false
	}
	v := s[len(pre) : len(s)-1]
	body := strings.TrimRight(v, "=")
	if body == "" || len(v)-len(body) > 2 {
		return "", false
	}
	for i := range len(body) {
		c := body[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_') {
			return "", false
		}
	}
	return v, true
}

func (d *directive) hasNonce(n string) bool {
	for _, v := range d.nonces() {
		if v == n {
			return true
		}
	}
	return false
}

// allowsAllInline is CSP3's "does a source list allow all inline
// behavior for type": 'unsafe-inline' counts only in a list without a
// nonce-source or hash-source, and, for scripts, without 'strict-dynamic'.
func (d *directive) allowsAllInline(k Kind) bool {
	for _, s := range d.sources {
		if _, ok := nonceValue(s); ok {
			return false
		}
		if _, ok := hashValue(s); ok {
			return false
		}
		if (k == ScriptElem || k == ScriptAttr) && strings.EqualFold(s, "'strict-dynamic'") {
			return false
		}
	}
	return d.keyword("'unsafe-inline'")
}

// allowsNothing reports whether the list is empty or holds only 'none':
// it matches nothing (CSP3, "does url match source list"), and ssatd
// does not open it.
func (d *directive) allowsNothing() bool {
	for _, s := range d.sources {
		if !strings.EqualFold(s, "'none'") {
			return false
		}
	}
	return true
}

// allowsExternal reports whether an external script from the page's own
// origin may pass the list without a nonce: 'strict-dynamic' ignores
// every host and scheme source (CSP3, "Usage of 'strict-dynamic'"), and a
// list of keywords, nonces and hashes only has none. A host source is taken to allow it,
// since the bundle is served from the host the client asked for.
func (d *directive) allowsExternal() bool {
	if d.keyword("'strict-dynamic'") {
		return false
	}
	for _, s := range d.sources {
		if s == "" || s[0] != '\'' || strings.EqualFold(s, "'self'") {
			return true
		}
	}
	return false
}
