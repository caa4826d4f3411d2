package rewrite

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/net/html"
)

// referenceRewrite is a rewriter built on golang.org/x/net/html's Tokenizer,
// the reference of the differential tests. It shares no code with the
// scanner (independence_test.go): tokens, tag names and attributes come from
// the Tokenizer (tokattrs_test.go for their positions), the URL rules and
// the escaping from the oracle (urls_oracle_test.go), and the injections
// are written here from the Options and docs/behaviour.md ("Bundle tag",
// "SSAT injection"). It copies every token's raw bytes, and replaces only
// the values of the URL attributes it rewrites.
func referenceRewrite(dst io.Writer, src io.Reader, opts *Options) (Stats, error) {
	ref := &refRewriter{dst: dst, opts: opts, rules: newRefRules(opts.OriginHost, opts.RequestHost, opts.RequestScheme)}
	ref.bodyEndDone = opts.BodyEnd == nil
	cr := &countingReader{r: src}
	err := ref.run(cr)
	ref.stats.InBytes = cr.n
	return ref.stats, err
}

type refRewriter struct {
	dst         io.Writer
	opts        *Options
	rules       refRules
	stats       Stats
	err         error // the first write error, wrapped in ErrWrite
	bodyEndDone bool
}

func (ref *refRewriter) run(src io.Reader) error {
	maxTok := ref.opts.MaxTokenBytes
	if maxTok <= 0 {
		maxTok = DefaultMaxTokenBytes
	}
	z := html.NewTokenizer(src)
	z.SetMaxBuf(maxTok)
	// rawOpen is the element whose raw text or RCDATA the Tokenizer is in:
	// it reports that content as text, up to the element's end tag.
	rawOpen := ""
	for ref.err == nil {
		switch tt := z.Next(); tt {
		case html.ErrorToken:
			return ref.end(z, src, rawOpen)
		case html.StartTagToken, html.SelfClosingTagToken:
			raw := append([]byte(nil), z.Raw()...)
			name, _ := z.TagName()
			rawOpen = refRawTextElement(string(name))
			out, err := ref.rewriteTag(raw)
			if err != nil {
				return err
			}
			ref.write(out)
			if string(name) == "head" && !ref.stats.HeadFound {
				ref.stats.HeadFound = true
				ref.write(ref.opts.HeadPrepend)
			}
		case html.TextToken, html.CommentToken:
			raw := z.Raw()
			if ref.opts.Inline && refTextTokenRewritten(raw, tt == html.CommentToken) {
				out, n := ref.rules.refInline(string(raw), true)
				ref.stats.InlineRewritten += n
				raw = []byte(out)
			}
			ref.write(raw)
		case html.EndTagToken:
			raw := append([]byte(nil), z.Raw()...)
			name, _ := z.TagName()
			rawOpen = "" // inside raw text, only the element's own end tag is a tag
			if string(name) == "body" && !ref.bodyEndDone {
				ref.stats.BodyEndFound = true
				if ref.stats.HeadFound { // the bids follow the ad slots
					ref.bodyEndDone = true
					ref.bodyEnd()
				}
			}
			ref.write(raw)
		default:
			ref.write(z.Raw())
		}
	}
	return ref.err
}

// end finishes the page at the Tokenizer's error token.
func (ref *refRewriter) end(z *html.Tokenizer, src io.Reader, rawOpen string) error {
	err := z.Err()
	if errors.Is(err, html.ErrBufferExceeded) && !ref.bodyEndDone && ref.err == nil {
		// A token larger than MaxTokenBytes: the bids go before it, the
		// last place known (docs/behaviour.md, "SSAT injection"), unless
		// that is inside raw text.
		ref.bodyEndDone = true
		if rawOpen != "" {
			ref.stats.BodyEndSkipped = rawOpen
		} else {
			ref.bodyEnd()
		}
	}
	// A tag cut off by the end of the input is the error token's raw
	// bytes; it is still page content.
	ref.write(z.Raw())
	if errors.Is(err, html.ErrBufferExceeded) {
		// The rest is copied as is.
		ref.stats.Oversize = true
		ref.write(z.Buffered())
		_, err = io.Copy(writerFunc(func(p []byte) (int, error) {
			ref.write(p)
			return len(p), ref.err // stop reading once the destination failed
		}), src)
		if err == nil {
			err = io.EOF
		}
	}
	if err != io.EOF {
		return err
	}
	if !ref.bodyEndDone && ref.err == nil {
		if rawOpen != "" {
			// docs/behaviour.md, "SSAT injection": bids after the end of a
			// page that ends in raw text would be that element's text.
			ref.stats.BodyEndSkipped = rawOpen
		} else {
			ref.bodyEnd()
		}
	}
	return ref.err
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func (ref *refRewriter) write(p []byte) {
	if ref.err != nil || len(p) == 0 {
		return
	}
	n, err := ref.dst.Write(p)
	ref.stats.OutBytes += int64(n)
	if err != nil {
		ref.err = errors.Join(ErrWrite, err)
	}
}

// bodyEnd writes Options.BodyEnd's result, only into a page that got
// HeadPrepend (docs/behaviour.md, "SSAT injection"), after BeforeWait.
func (ref *refRewriter) bodyEnd() {
	if !ref.stats.HeadFound {
		return
	}
	if ref.opts.BeforeWait != nil {
		if err := ref.opts.BeforeWait(); err != nil {
			ref.err = errors.Join(ErrWrite, err)
			return
		}
	}
	ref.write(ref.opts.BodyEnd())
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// refRawTextElement returns name when the Tokenizer reads the element's
// content as raw text or RCDATA (the HTML standard's raw text and escapable
// raw text elements, plus plaintext, xmp, iframe, noembed, noframes and
// noscript as golang.org/x/net/html treats them), else "".
func refRawTextElement(name string) string {
	switch name {
	case "script", "style", "textarea", "title", "plaintext", "xmp", "iframe", "noembed", "noframes", "noscript":
		return name
	}
	return ""
}

// rewriteTag returns the start tag raw with its URL attributes rewritten
// (raw itself when none changes), after checking with the Tokenizer that
// the new tag has the same attributes, with the rewritten values. A
// repeated attribute, which a browser ignores, is rewritten as well: the
// page then names the origin for no parser that keeps the last one.
func (ref *refRewriter) rewriteTag(raw []byte) ([]byte, error) {
	if ref.rules.host == "" {
		return raw, nil
	}
	attrs, err := tokenizerAttrs(raw)
	if err != nil {
		return nil, err
	}
	var out strings.Builder
	last := 0
	want := make([]string, len(attrs))
	for i, a := range attrs {
		want[i] = a.Val
		kind := refKind(a.Key)
		if kind == "" && ref.opts.Inline && refInlineAttr(a.Key) {
			kind = "content"
		}
		if kind == "" || a.ValAt[0] == a.ValAt[1] {
			continue
		}
		quote := valueQuote(raw, a.ValAt)
		nv, dec, changed := ref.valueRaw(string(raw[a.ValAt[0]:a.ValAt[1]]), quote, kind)
		if !changed {
			continue
		}
		// The rules read the page's bytes, where a NUL is still a NUL
		// (nulBefore); the Tokenizer's value has U+FFFD for it.
		if before := strings.ReplaceAll(refDecode(string(raw[a.ValAt[0]:a.ValAt[1]]), quote), "\x00", "\ufffd"); before != a.Val {
			return nil, fmt.Errorf("reference: value %q decodes to %q, the Tokenizer's %q", raw[a.ValAt[0]:a.ValAt[1]], before, a.Val)
		}
		want[i] = strings.ReplaceAll(dec, "\x00", "\ufffd")
		out.Write(raw[last:a.ValAt[0]])
		if quote == 0 && refNeedsQuotes(nv) {
			// docs/behaviour.md: an unquoted value that would need quotes
			// after rewriting gets double quotes.
			nv = `"` + strings.ReplaceAll(nv, `"`, "&quot;") + `"`
		}
		out.WriteString(nv)
		last = a.ValAt[1]
		ref.stats.URLsRewritten++
	}
	if last == 0 {
		return raw, nil
	}
	out.Write(raw[last:])
	return []byte(out.String()), refCheckTag(raw, []byte(out.String()), attrs, want)
}

// value rewrites a decoded attribute value: by the URL rules for the URL
// attributes, then, with Options.Inline, by the escaped forms; by the
// inline rules for the other attributes ("content").
func (ref *refRewriter) value(v, kind string) (string, bool) {
	if kind == "content" {
		out, n := ref.rules.refInline(v, true)
		return out, n > 0
	}
	out, changed := ref.rules.rewrite(v, kind)
	if ref.opts.Inline {
		if enc, n := ref.rules.refInline(out, false); n > 0 {
			return enc, true
		}
	}
	return out, changed
}

// valueRaw is value for a raw attribute value in its quotes, as
// refRules.rewriteRaw: the page's own spelling is kept when the same
// rewrite of the raw text decodes to the rewritten value, and the
// rewritten value is escaped for the quotes otherwise. want is the
// rewritten decoded value.
func (ref *refRewriter) valueRaw(raw string, quote byte, kind string) (out, want string, changed bool) {
	want, changed = ref.value(refDecode(raw, quote), kind)
	if !changed {
		return "", "", false
	}
	if direct, ok := ref.value(raw, kind); ok && refDecode(direct, quote) == want {
		return direct, want, true
	}
	return refEscape(want, quote), want, true
}

// refCheckTag checks that the rewritten tag out reads, to the Tokenizer, as
// the original raw with the values want: no rewrite may end a value early,
// open another attribute or end the tag.
func refCheckTag(raw, out []byte, attrs []tokAttr, want []string) error {
	got, err := tokenizerAttrs(out)
	if err != nil {
		return fmt.Errorf("reference: rewritten tag from %q: %w", raw, err)
	}
	if len(got) != len(attrs) {
		return fmt.Errorf("reference: rewritten tag %q (from %q) has %d attributes, want %d", out, raw, len(got), len(attrs))
	}
	for i, a := range got {
		if a.Key != attrs[i].Key || a.Val != want[i] {
			return fmt.Errorf("reference: rewritten tag %q (from %q): attribute %s=%q, want %s=%q", out, raw, a.Key, a.Val, attrs[i].Key, want[i])
		}
	}
	return nil
}
