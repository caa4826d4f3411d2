package firstparty

import (
	"html"
	"strings"

	xhtml "golang.org/x/net/html"
)

// tag is a start tag being rewritten: its attributes in order, and its raw
// bytes to copy when nothing changes.
type tag struct {
	name    string
	attrs   []xhtml.Attribute
	self    bool
	raw     []byte
	changed bool
}

func readTag(z *xhtml.Tokenizer, name string, tt xhtml.TokenType, raw []byte) tag {
	t := tag{name: name, self: tt == xhtml.SelfClosingTagToken, raw: append([]byte(nil), raw...)}
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		if len(k) == 0 && !more {
			break
		}
		t.attrs = append(t.attrs, xhtml.Attribute{Key: string(k), Val: string(v)})
	}
	return t
}

func (t *tag) get(key string) (string, bool) {
	for _, a := range t.attrs {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func (t *tag) set(key, val string) {
	for i, a := range t.attrs {
		if a.Key == key {
			if a.Val != val {
				t.attrs[i].Val, t.changed = val, true
			}
			return
		}
	}
	t.attrs = append(t.attrs, xhtml.Attribute{Key: key, Val: val})
	t.changed = true
}

func (t *tag) del(key string) {
	for i, a := range t.attrs {
		if a.Key == key {
			t.attrs = append(t.attrs[:i], t.attrs[i+1:]...)
			t.changed = true
			return
		}
	}
}

// bytes is the raw tag when unchanged, else the tag written anew.
func (t *tag) bytes() []byte {
	if !t.changed {
		return t.raw
	}
	var b strings.Builder
	b.WriteString("<" + t.name)
	for _, a := range t.attrs {
		b.WriteString(" " + a.Key)
		if a.Val != "" {
			b.WriteString(`="` + html.EscapeString(a.Val) + `"`)
		}
	}
	if t.self {
		b.WriteString("/")
	}
	b.WriteString(">")
	return []byte(b.String())
}

// editTag applies the sanitizer's attribute rules, then the rewriter's.
func (c *creativeCtx) editTag(t *tag) {
	if c.sanitize {
		sanitizeAttrs(t)
	}
	if c.rewrite {
		c.rewriteAttrs(t)
	}
}

// proxyAttr proxies an attribute whose value is an absolute URL.
func (c *creativeCtx) proxyAttr(t *tag, key string) {
	if v, ok := t.get(key); ok {
		if abs, ok := toAbs(c.excludes, v); ok {
			t.set(key, c.proxyURL(abs))
		}
	}
}

func (c *creativeCtx) srcsetAttr(t *tag, key string) {
	if v, ok := t.get(key); ok {
		if r := c.rewriteSrcset(v); r != v {
			t.set(key, r)
		}
	}
}

// rewriteAttrs is rewrite_creative_html_impl's element handlers
// (core/creative.rs:713-873).
func (c *creativeCtx) rewriteAttrs(t *tag) {
	switch t.name {
	case "img":
		c.proxyAttr(t, "src")
		c.proxyAttr(t, "data-src")
	case "script", "video", "audio", "source", "embed", "iframe":
		c.proxyAttr(t, "src")
	case "link":
		rel, _ := t.get("rel")
		if rel = strings.ToLower(rel); strings.Contains(rel, "stylesheet") ||
			strings.Contains(rel, "preload") || strings.Contains(rel, "prefetch") {
			c.proxyAttr(t, "href")
		}
	case "object":
		c.proxyAttr(t, "data")
	case "input":
		if typ, ok := t.get("type"); ok && strings.EqualFold(typ, "image") {
			c.proxyAttr(t, "src")
		}
	case "image", "use":
		c.proxyAttr(t, "href")
		c.proxyAttr(t, "xlink:href")
	case "a", "area":
		if v, ok := t.get("href"); ok {
			if abs, ok := toAbs(c.excludes, v); ok {
				click := c.clickURL(abs)
				t.set("href", click)
				t.set("data-tsclick", click)
			}
		}
	}
	if v, ok := t.get("style"); ok {
		if r := c.rewriteStyleURLs(v); r != v {
			t.set("style", r)
		}
	}
	c.srcsetAttr(t, "srcset")
	c.srcsetAttr(t, "imagesrcset")
}

// URL-bearing attributes the sanitizer checks (core/creative.rs:410-433).
var sanitizedURLAttrs = []string{"href", "src", "data-src", "action", "formaction", "background", "poster", "xlink:href"}

// sanitizeAttrs is sanitize_creative_html's attribute rules
// (core/creative.rs:399-486): on* handlers go, and URL attributes, srcsets
// and styles that could run script or load non-raster data: URLs.
func sanitizeAttrs(t *tag) {
	for i := 0; i < len(t.attrs); {
		if strings.HasPrefix(strings.ToLower(t.attrs[i].Key), "on") {
			t.del(t.attrs[i].Key)
			continue
		}
		i++
	}
	for _, k := range sanitizedURLAttrs {
		if v, ok := t.get(k); ok && dangerousURL(strings.ToLower(strings.TrimSpace(v))) {
			t.del(k)
		}
	}
	for _, k := range []string{"srcset", "imagesrcset"} {
		v, ok := t.get(k)
		if !ok {
			continue
		}
		for _, entry := range strings.Split(v, ",") {
			fields := strings.Fields(entry)
			if len(fields) > 0 && dangerousURL(strings.ToLower(fields[0])) {
				t.del(k)
				break
			}
		}
	}
	if v, ok := t.get("style"); ok {
		l := strings.ToLower(v)
		for _, bad := range []string{"expression(", "javascript:", "vbscript:", "data:text/", "data:application/", "data:image/svg"} {
			if strings.Contains(l, bad) {
				t.del("style")
				break
			}
		}
	}
}

func dangerousURL(lower string) bool {
	return strings.HasPrefix(lower, "javascript:") || strings.HasPrefix(lower, "vbscript:") ||
		strings.HasPrefix(lower, "data:") && !safeDataURI(lower)
}

// safeDataURI allows only raster image data: URLs (core/creative.rs:330-341).
func safeDataURI(lower string) bool {
	mime := strings.TrimPrefix(lower, "data:")
	if i := strings.IndexAny(mime, ";,"); i >= 0 {
		mime = mime[:i]
	}
	switch mime {
	case "image/png", "image/jpeg", "image/gif", "image/webp", "image/avif":
		return true
	}
	return false
}
