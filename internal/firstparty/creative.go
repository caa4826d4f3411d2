package firstparty

import (
	"errors"
	"io"
	"strconv"
	"strings"

	"golang.org/x/net/html"
)

// MaxCreativeBytes is upstream's per-creative cap (core/creative.rs:324): a
// creative larger than this, before or after rewriting, becomes "".
const MaxCreativeBytes = 1 << 20

// auctionPriceMacro is the clear-price macro (core/creative.rs:628).
const auctionPriceMacro = "${AUCTION_PRICE}"

// ExpandAuctionPrice replaces ${AUCTION_PRICE} with the winning CPM in its
// shortest round-trip form, never in exponent notation, as Rust's f64
// Display does (core/creative.rs:646-651). ${AUCTION_PRICE:B64} is left as it
// is. Upstream expands before rewriting on the inline page-bids path
// (publisher.rs:5203-5204), since signing would freeze the macro.
func ExpandAuctionPrice(markup string, cpm float64) string {
	if !strings.Contains(markup, auctionPriceMacro) {
		return markup
	}
	return strings.ReplaceAll(markup, auctionPriceMacro, strconv.FormatFloat(cpm, 'f', -1, 64))
}

// CreativeOptions say how ProcessCreative treats one creative.
type CreativeOptions struct {
	// Signer signs the proxy and click URLs; required when Rewrite is set.
	Signer *Signer
	// ExcludeDomains is [rewrite] exclude_domains.
	ExcludeDomains []string
	// Sanitize is auction.sanitize_creatives; Rewrite is
	// auction.rewrite_creatives (upstream default true).
	Sanitize, Rewrite bool
	// BundleTag is put at the start of <body>, or before the markup when it
	// has none (core/creative.rs:701-712, 925-934); empty puts nothing.
	BundleTag string
	// BaseOrigin ("https://host[:port]", no trailing slash) makes the
	// first-party URLs absolute, for creatives rendered in a foreign
	// origin's frame (core/creative.rs:600-625); empty makes them
	// root-relative.
	BaseOrigin string
}

// ProcessCreative is process_auction_creative (core/creative.rs:519-570):
// over MaxCreativeBytes the creative is "" whatever the mode; otherwise it is
// sanitized if asked, then rewritten if asked, in one pass. A creative that
// cannot be rewritten whole is "" too: a half-rewritten one would mix
// first-party and third-party URLs.
func ProcessCreative(adm string, o CreativeOptions) string {
	if len(adm) > MaxCreativeBytes {
		return ""
	}
	if !o.Sanitize && !o.Rewrite {
		return adm
	}
	c := creativeCtx{
		signer: o.Signer, excludes: o.ExcludeDomains, base: o.BaseOrigin,
		sanitize: o.Sanitize, rewrite: o.Rewrite && o.Signer != nil, bundle: o.BundleTag,
		max: MaxCreativeBytes,
	}
	if !c.rewrite {
		c.bundle = ""
	}
	return c.run(adm)
}

// RewriteHTML rewrites an HTML document proxied through /first-party/proxy:
// the creative pass, bounded by the proxy's rewrite limit rather than the
// per-creative cap (rewrite_proxied_html, core/creative.rs:596-598).
func (f *Family) RewriteHTML(doc string, o RewriteOptions) string {
	c := creativeCtx{signer: f.signer, excludes: f.cfg.ExcludeDomains, rewrite: true,
		bundle: o.BundleTag, max: int(o.MaxBytes)}
	return c.run(doc)
}

// RewriteOptions are RewriteHTML's: the bundle tag and the output bound.
type RewriteOptions struct {
	BundleTag string
	MaxBytes  int64
}

// RewriteCSS is rewrite_css_body (core/creative.rs:315-317).
func (f *Family) RewriteCSS(css string) string {
	c := creativeCtx{signer: f.signer, excludes: f.cfg.ExcludeDomains, rewrite: true}
	return c.rewriteStyleURLs(css)
}

// CreativeOptions returns the options the family's settings give a creative:
// its signer, exclusions and sanitizing, with Rewrite set. The caller adds
// BundleTag or BaseOrigin for its render context.
func (f *Family) CreativeOptions() CreativeOptions {
	return CreativeOptions{Signer: f.signer, ExcludeDomains: f.cfg.ExcludeDomains,
		Sanitize: f.cfg.SanitizeCreatives, Rewrite: true}
}

type creativeCtx struct {
	signer            *Signer
	excludes          []string
	base, bundle      string
	sanitize, rewrite bool
	max               int
}

func (c *creativeCtx) proxyURL(abs string) string { return c.signer.signURL(abs, c.base+PathProxy) }
func (c *creativeCtx) clickURL(abs string) string { return c.signer.signURL(abs, c.base+PathClick) }

var errOverflow = errors.New("firstparty: rewritten creative over its bound")

// run is one tokenizer pass over the markup. Tags it does not change are
// copied byte for byte (Tokenizer.Raw); a changed tag is written again with
// its attributes in order.
func (c *creativeCtx) run(markup string) string {
	if markup == "" {
		return ""
	}
	out := &boundedBuilder{max: c.max}
	z := html.NewTokenizer(strings.NewReader(markup))
	injected := false
	var drop dropper
	var inStyle bool
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if z.Err() != io.EOF {
				return ""
			}
			break
		}
		raw := z.Raw()
		if drop.active() {
			drop.step(z, tt)
			continue
		}
		switch tt {
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			tag := string(name)
			if c.dropsElement(tag) {
				drop.start(tag, tt == html.SelfClosingTagToken)
				continue
			}
			t := readTag(z, tag, tt, raw)
			c.editTag(&t)
			out.write(t.bytes())
			inStyle = tag == "style" && tt == html.StartTagToken
			if tag == "body" && !injected && c.bundle != "" {
				out.writeString(c.bundle)
				injected = true
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if tag := string(name); c.dropsElement(tag) {
				continue // a stray end tag of a removed element
			}
			inStyle = false
			out.write(raw)
		case html.TextToken:
			if inStyle && c.rewrite {
				out.writeString(c.rewriteStyleURLs(string(raw)))
			} else {
				out.write(raw)
			}
		default:
			out.write(raw)
		}
	}
	if out.over {
		return ""
	}
	s := out.b.String()
	if !injected && c.bundle != "" && s != "" {
		s = c.bundle + s
		if c.max > 0 && len(s) > c.max {
			return ""
		}
	}
	return s
}

// boundedBuilder stops keeping output once it passes max (core/creative.rs:877-888).
type boundedBuilder struct {
	b    strings.Builder
	max  int
	over bool
}

func (o *boundedBuilder) write(p []byte) { o.writeString(string(p)) }

func (o *boundedBuilder) writeString(s string) {
	if o.over {
		return
	}
	if o.max > 0 && o.b.Len()+len(s) > o.max {
		o.over = true
		o.b.Reset()
		return
	}
	o.b.WriteString(s)
}

// sanitizeDropped are removed with their content by sanitize_creative_html
// (core/creative.rs:386-392).
var sanitizeDropped = map[string]bool{
	"script": true, "object": true, "embed": true, "base": true, "meta": true,
	"form": true, "link": true, "style": true, "noscript": true,
}

// dropsElement: <base> always goes when rewriting, since it would rebase
// the root-relative first-party URLs (core/creative.rs:691-700); the
// sanitizer's list goes when sanitizing.
func (c *creativeCtx) dropsElement(tag string) bool {
	return c.rewrite && tag == "base" || c.sanitize && sanitizeDropped[tag]
}

// voidElements have no content or end tag to skip.
var voidElements = map[string]bool{
	"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true,
	"img": true, "input": true, "link": true, "meta": true, "source": true,
	"track": true, "wbr": true,
}

// dropper skips a removed element and everything inside it.
type dropper struct {
	tag   string
	depth int
}

func (d *dropper) active() bool { return d.depth > 0 }

func (d *dropper) start(tag string, selfClosing bool) {
	if voidElements[tag] || selfClosing {
		return
	}
	d.tag, d.depth = tag, 1
}

func (d *dropper) step(z *html.Tokenizer, tt html.TokenType) {
	if tt != html.StartTagToken && tt != html.EndTagToken {
		return
	}
	name, _ := z.TagName()
	if string(name) != d.tag {
		return
	}
	if tt == html.StartTagToken {
		d.depth++
	} else {
		d.depth--
	}
}
