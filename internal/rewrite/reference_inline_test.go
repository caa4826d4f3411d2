package rewrite

import "strings"

// The inline rules of docs/behaviour.md ("URL rewriting", Options.Inline)
// written plainly on strings for the reference rewriter: the absolute
// forms of the text rules and the escaped forms, in one pass over a whole
// text or decoded attribute value. Part of the reference
// (independence_test.go): nothing here comes from the scanner.

// refEscapes are the escaped spellings of "//" before a host: the two
// slashes, the ':' after a scheme (and a port's ':', which may also be
// written plainly), and how the request host's ':', '[' and ']' are
// written in them.
var refEscapes = []struct {
	slashes, colon string
	hostRepl       *strings.Replacer
}{
	{"%2f%2f", "%3a", strings.NewReplacer(":", "%3A", "[", "%5B", "]", "%5D")},
	{"%252f%252f", "%253a", strings.NewReplacer(":", "%253A", "[", "%255B", "]", "%255D")},
	{`\u002f\u002f`, `\u003a`, strings.NewReplacer()},
}

// refEscLetters reports whether the escape esc, found in the lower-cased
// text at at, has in text itself the letter after each backslash as esc
// has it: "\U002F" is not the escape "\u002F".
func refEscLetters(text string, at int, esc string) bool {
	for i := 1; i < len(esc); i++ {
		if esc[i-1] == '\\' && text[at+i] != esc[i] {
			return false
		}
	}
	return true
}

// refInline applies the inline rules to text and reports how many origin
// references it replaced. With plain false only the escaped forms apply
// (after the URL rules of an href, src, action or srcset value).
func (r refRules) refInline(text string, plain bool) (string, int) {
	if r.host == "" {
		return text, 0
	}
	low := refLower(text)
	var out strings.Builder
	last, n := 0, 0
	for i := 0; ; {
		k := strings.Index(low[i:], r.host)
		if k < 0 {
			break
		}
		at := i + k
		i = at + 1
		before := low[last:at]
		from, scheme, repl, portColon, found := 0, "", "", ":", false
		// The absolute forms: a scheme and slashes or backslashes, or
		// slashes alone (refSeparators), JSON's "\/" among them.
		if form, start, keep, ok := refSeparators(low, last, at); plain && ok {
			from, found = start, true
			repl = r.refReplacement(form, text[keep:at])
			if form != "//" {
				scheme = form
			}
		}
		for _, e := range refEscapes {
			if found || !strings.HasSuffix(before, e.slashes) || !refEscLetters(text, at-len(e.slashes), e.slashes) {
				continue
			}
			found, portColon = true, e.colon
			from = at - len(e.slashes)
			host := e.hostRepl.Replace(r.reqHost)
			repl = text[from:at] + host
			for _, c := range []string{e.colon, ":"} {
				for _, s := range []string{"https", "http"} {
					if scheme == "" && strings.HasSuffix(low[last:from], s+c) && refEscLetters(text, from-len(c), c) {
						scheme = s
						from -= len(s + c)
						repl = r.scheme + text[from+len(s):at] + host
					}
				}
			}
		}
		if !found {
			continue
		}
		// A NUL, which the page's DOM drops or replaces, among the eleven
		// bytes before a relative reference (where "https\u003a" would be)
		// leaves it as it is.
		if scheme == "" && strings.Contains(text[max(0, from-11):from], "\x00") {
			continue
		}
		end, ok := r.refPortEnd(text, low, at+len(r.host), scheme, portColon)
		if !ok {
			continue
		}
		out.WriteString(text[last:from])
		out.WriteString(repl)
		last, i = end, end
		n++
	}
	if n == 0 {
		return text, 0
	}
	out.WriteString(text[last:])
	return out.String(), n
}

// refPortEnd decides the bytes after the origin's name at low[end:]: a
// port (after ':' or the escaped colon) that keeps it the origin, and then
// a byte that cannot continue a host name. It returns where the reference
// ends.
func (r refRules) refPortEnd(text, low string, end int, scheme, escColon string) (int, bool) {
	for _, c := range []string{":", escColon} {
		if !strings.HasPrefix(low[end:], c) || !refEscLetters(text, end, c) {
			continue
		}
		p := end + len(c)
		q := p
		for q < len(low) && low[q] >= '0' && low[q] <= '9' {
			q++
		}
		form := scheme
		if form == "" {
			form = "//"
		}
		if !r.portKeepsOrigin(low[p:q], form) {
			return 0, false
		}
		end = q
		return end, end == len(low) || !strings.ContainsRune("\x00abcdefghijklmnopqrstuvwxyz0123456789-._:", rune(low[end]))
	}
	if r.port != "" {
		return 0, false
	}
	return end, end == len(low) || !strings.ContainsRune("\x00abcdefghijklmnopqrstuvwxyz0123456789-._:", rune(low[end]))
}

// refTextTokenRewritten reports whether the text rules apply to a token's
// raw bytes: text (of every element, raw text and RCDATA included) and
// "<!--" comments, not doctypes and bogus comments.
func refTextTokenRewritten(raw []byte, comment bool) bool {
	return !comment || strings.HasPrefix(string(raw), "<!--")
}

// refInlineAttr reports whether an attribute that is no URL attribute gets
// the inline rules: every one but the namespace declarations.
func refInlineAttr(key string) bool {
	return key != "xmlns" && !strings.HasPrefix(key, "xmlns:")
}
