package config

import (
	"fmt"
	"mime"
	"strings"
)

// DefaultRewriteContentTypes is publisher.rewrite_content_types by default:
// upstream's processable text types (trusted-server-core publisher.rs,
// is_processable_content_type: "text/", "application/javascript",
// "application/json").
func DefaultRewriteContentTypes() []string {
	return []string{"text/*", "application/javascript", "application/json"}
}

// RSCContentType is the React Server Components payload, whose text rows
// carry byte lengths: rewritten row by row, the lengths made new
// (docs/decisions.md, entry 25).
const RSCContentType = "text/x-component"

// validateRewriteContentTypes checks and lower-cases
// publisher.rewrite_content_types: each entry a media type without
// parameters, "type/subtype" or "type/*".
func validateRewriteContentTypes(p *problems, pub *PublisherConfig) {
	for i, t := range pub.RewriteContentTypes {
		key := fmt.Sprintf("publisher.rewrite_content_types[%d]", i)
		mt, params, err := mime.ParseMediaType(t)
		switch {
		case err != nil || len(params) > 0 || strings.TrimSpace(t) != t || !strings.Contains(mt, "/"):
			p.addf(key, "must be a media type such as \"text/css\" or \"text/*\", without parameters, got %q", t)
			continue
		case strings.HasPrefix(mt, "*/"):
			p.addf(key, "a wildcard is allowed only as the subtype (\"text/*\"), got %q", t)
			continue
		case mt == "text/html":
			p.addf(key, "text/html is always rewritten as HTML; list only other types, got %q", t)
			continue
		}
		pub.RewriteContentTypes[i] = mt
	}
}
