package proxy

import (
	"mime"
	"strings"

	"github.com/ssatd/ssatd/internal/config"
	bodypipe "github.com/ssatd/ssatd/internal/pipeline"
)

// textKind is which rules the pipeline applies to a response body: the
// HTML rewrite (the zero value), or the text rules of
// docs/behaviour.md, "Text responses" (bodypipe.Kind).
type textKind = bodypipe.Kind

const (
	textHTML   = bodypipe.HTML
	textOther  = bodypipe.Text   // CSS, JSON, XML and other text: bare hosts at host-name boundaries
	textScript = bodypipe.Script // JavaScript: bare hosts only in string literals
	textFlight = bodypipe.Flight // React Server Components: textOther's rules, row by row
)

// textTypes is publisher.rewrite_content_types, validated: media types and
// "type/*" wildcards, lower case. Empty rewrites no text response.
type textTypes []string

// kindOf says whether a response of this Content-Type gets the text rules,
// and which. HTML is the HTML pipeline's; a React Server Components
// payload is rewritten row by row, its text rows' byte lengths made new
// (rewrite.RewriteFlight; docs/decisions.md, entry 25).
func (t textTypes) kindOf(contentType string) (textKind, bool) {
	if len(t) == 0 || contentType == "" {
		return 0, false
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt, _, _ = strings.Cut(contentType, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
	}
	if mt == "text/html" {
		return 0, false
	}
	major, _, _ := strings.Cut(mt, "/")
	for _, want := range t {
		if want == mt || strings.HasSuffix(want, "/*") && want[:len(want)-2] == major {
			switch {
			case isScriptType(mt):
				return textScript, true
			case mt == config.RSCContentType:
				return textFlight, true
			}
			return textOther, true
		}
	}
	return 0, false
}

// isScriptType reports the JavaScript media types (RFC 9239 §6: the
// current one and those it made obsolete).
func isScriptType(mt string) bool {
	switch mt {
	case "text/javascript", "application/javascript", "application/x-javascript",
		"application/ecmascript", "text/ecmascript", "text/x-javascript":
		return true
	}
	return false
}
