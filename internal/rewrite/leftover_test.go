package rewrite

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// The measure of issue 22's "Done when": after the rewrite, which absolute
// origin URLs does a page still hold, and where. The search and the
// context of each find are written here on strings, with x/net/html's
// Tokenizer for the markup; nothing comes from the scanner.

// Leftover is one absolute origin URL found in a rewritten page.
type Leftover struct {
	At      int    // byte offset in the page
	Form    string // how it is written: "https://", "//", `\/\/`, "%2F%2F", ...
	Context string // where: "text", "comment", "attr data-*", "script json", ...
	Excerpt string
}

// leftoverForms are the spellings of "scheme://" and "//" before the host
// that the search looks for, lower case; each stands for itself with and
// without a scheme before it.
var leftoverForms = []string{
	"//", `\/\/`, // plain and JSON-escaped
	"%2f%2f", "%252f%252f", // percent-encoded (share links), once and twice
	`\u002f\u002f`, `\x2f\x2f`, // JavaScript escapes
	"&#x2f;&#x2f;", "&#47;&#47;", "&sol;&sol;", // character references
}

// FindLeftovers returns every absolute origin URL in page: origin (host or
// host:port, as Options.OriginHost) after one of leftoverForms, in any
// letter case, ending the host there (the next byte cannot continue a host
// name; a port must be the origin's, or its scheme's default written out).
func FindLeftovers(page []byte, origin string) []Leftover {
	name, port := origin, ""
	if i := strings.LastIndex(origin, ":"); i >= 0 && !strings.Contains(origin[i:], "]") {
		name, port = origin[:i], origin[i+1:]
	}
	name = strings.ToLower(name)
	low := strings.ToLower(string(page))
	var found []Leftover
	for i := 0; ; {
		k := strings.Index(low[i:], name)
		if k < 0 {
			break
		}
		at := i + k
		i = at + 1
		form := ""
		for _, f := range leftoverForms {
			if strings.HasSuffix(low[:at], f) {
				form = f
				break
			}
		}
		if form == "" || !leftoverEndsHost(low, at+len(name), port) {
			continue
		}
		found = append(found, Leftover{At: at - len(form), Form: form,
			Excerpt: string(page[max(0, at-60):min(len(page), at+len(name)+40)])})
	}
	classifyLeftovers(page, found)
	return found
}

// leftoverEndsHost reports whether the host name ending at end is the
// origin's whole authority: not followed by more of a host name, and with
// the origin's port (or, for an origin on its default port, none, :80 or
// :443). A percent-encoded ':' ("%3a") is read as ':'.
func leftoverEndsHost(low string, end int, port string) bool {
	rest := low[end:]
	p, ok := "", false
	switch {
	case strings.HasPrefix(rest, ":"):
		p, ok = rest[1:], true
	case strings.HasPrefix(rest, "%3a"):
		p, ok = rest[3:], true
	}
	if ok {
		n := 0
		for n < len(p) && p[n] >= '0' && p[n] <= '9' {
			n++
		}
		if port != "" {
			return p[:n] == port
		}
		return p[:n] == "80" || p[:n] == "443"
	}
	if port != "" {
		return false
	}
	return rest == "" || !strings.ContainsRune("abcdefghijklmnopqrstuvwxyz0123456789-._", rune(rest[0]))
}

// classifyLeftovers names the context of each find, by the Tokenizer's
// tokens of the page: text (inside <template> or not), comment (conditional
// or not), the raw text of script (by its type), style, noscript, textarea,
// title and the like, and attributes by name (data-* together).
func classifyLeftovers(page []byte, found []Leftover) {
	if len(found) == 0 {
		return
	}
	z := html.NewTokenizer(bytes.NewReader(page))
	off, next := 0, 0
	rawOpen, scriptType, template := "", "", 0
	for next < len(found) {
		tt := z.Next()
		if tt == html.ErrorToken {
			for ; next < len(found); next++ {
				found[next].Context = "unfinished tag"
			}
			return
		}
		raw := z.Raw()
		end := off + len(raw)
		ctx := func(at int) string { return "" }
		switch tt {
		case html.StartTagToken, html.SelfClosingTagToken:
			tag := append([]byte(nil), raw...)
			n, _ := z.TagName()
			elem := string(n)
			attrs, _ := tokenizerAttrs(tag)
			ctx = func(at int) string {
				for _, a := range attrs {
					if at >= a.ValAt[0] && at < a.ValAt[1] {
						k := a.Key
						if strings.HasPrefix(k, "data-") {
							k = "data-*"
						}
						return "attr " + k + " <" + elem + ">"
					}
				}
				return "tag <" + elem + ">"
			}
			if tt == html.StartTagToken {
				rawOpen = refRawTextElement(elem)
				if elem == "template" {
					template++
				}
			}
			if rawOpen == "script" {
				scriptType = "js"
				for _, a := range attrs {
					if a.Key == "type" {
						scriptType = strings.ToLower(strings.TrimSpace(a.Val))
						if scriptType == "" || scriptType == "text/javascript" || scriptType == "module" || scriptType == "application/javascript" {
							scriptType = "js"
						}
					}
				}
			}
		case html.EndTagToken:
			n, _ := z.TagName()
			if string(n) == "template" && template > 0 {
				template--
			}
			rawOpen = ""
			ctx = func(int) string { return "end tag" }
		case html.CommentToken:
			c := "comment"
			if strings.HasPrefix(strings.ToLower(string(z.Text())), "[if") {
				c = "conditional comment"
			}
			ctx = func(int) string { return c }
		case html.DoctypeToken:
			ctx = func(int) string { return "doctype" }
		case html.TextToken:
			c := "text"
			switch {
			case rawOpen == "script":
				c = "script " + scriptType
			case rawOpen != "":
				c = rawOpen
			case template > 0:
				c = "text in <template>"
			}
			ctx = func(int) string { return c }
		}
		for ; next < len(found) && found[next].At < end; next++ {
			found[next].Context = ctx(found[next].At - off)
		}
		off = end
	}
}

// LeftoverExcepted reports the contexts where docs/behaviour.md ("URL
// rewriting") says why an origin URL stays: namespace declarations
// (xmlns, xmlns:*) and doctypes name a vocabulary or a document type, not
// a resource anything fetches.
func LeftoverExcepted(l Leftover) bool {
	return strings.HasPrefix(l.Context, "attr xmlns ") || strings.HasPrefix(l.Context, "attr xmlns:") || l.Context == "doctype"
}

// leftoverOrigins are the hosts each corpus page is rewritten for: the one
// its absolute URLs name most often (corpusOrigin, as the inline corpus
// tests choose it) and the host of its canonical link (as the differential
// corpus test does), when it has one.
func leftoverOrigins(page []byte) []string {
	hosts := []string{corpusOrigin(page)}
	if m := canonicalHost.FindSubmatch(page); m != nil {
		hosts = append(hosts, strings.ToLower(string(m[1])))
	}
	hosts = slices.DeleteFunc(hosts, func(h string) bool { return h == "" })
	slices.Sort(hosts)
	return slices.Compact(hosts)
}

// RewriteForLeftovers rewrites page for origin with the inline rules on, as
// ssatd serves it (publisher.rewrite_inline defaults to true).
func RewriteForLeftovers(tb testing.TB, page []byte, origin string) []byte {
	tb.Helper()
	var out bytes.Buffer
	if _, err := Rewrite(&out, bytes.NewReader(page), &Options{OriginHost: origin, RequestHost: inlineRequestHost,
		RequestScheme: "https", Inline: true}); err != nil {
		tb.Fatal(err)
	}
	return out.Bytes()
}

// LeftoverSummary counts finds by context and form, for the log.
func LeftoverSummary(found []Leftover) string {
	counts := map[string]int{}
	for _, f := range found {
		counts[f.Context+" | "+f.Form]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %5d  %s\n", counts[k], k)
	}
	return b.String()
}
