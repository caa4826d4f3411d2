package rewrite

import (
	"bufio"
	"bytes"
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
// the values of the URL attributes it rewrites. Where the Tokenizer alone
// does not follow the HTML standard as Rewrite does, the reference drives
// it through SVG and MathML as html.Parse does (reference_foreign_test.go)
// and reads a script's text itself (reference_script_test.go).
func referenceRewrite(dst io.Writer, src io.Reader, opts *Options) (Stats, error) {
	ref := &refRewriter{dst: dst, opts: opts, rules: newRefRules(opts.OriginHost, opts.RequestHost, opts.RequestScheme)}
	ref.bodyEndDone = opts.BodyEnd == nil
	cr := &countingReader{r: src}
	ref.in = cr
	err := ref.run()
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
	// in is the input the Tokenizer reads; a script's text is read past
	// it (reference_script_test.go), and the Tokenizer started again after.
	in      io.Reader
	maxTok  int
	foreign refForeignStack
	// rawOpen is the element whose raw text or RCDATA the Tokenizer is
	// in: it reports that content as text, up to the element's end tag;
	// "![CDATA[" while a CDATA section has not ended.
	rawOpen string
}

func (ref *refRewriter) run() error {
	ref.maxTok = ref.opts.MaxTokenBytes
	if ref.maxTok <= 0 {
		ref.maxTok = DefaultMaxTokenBytes
	}
	z := ref.tokenizer()
	for ref.err == nil {
		z.AllowCDATA(ref.foreign.foreignNode())
		switch tt := z.Next(); tt {
		case html.ErrorToken:
			return ref.end(z)
		case html.StartTagToken, html.SelfClosingTagToken:
			var err error
			if z, err = ref.startTag(z, tt == html.SelfClosingTagToken); err != nil || z == nil {
				return err
			}
		case html.TextToken, html.CommentToken:
			raw := z.Raw()
			if tt == html.TextToken && ref.rawOpen == "" && refUnendedCDATA(raw) {
				ref.rawOpen = "![CDATA[" // only at the end of the input
			}
			ref.writeText(raw, tt == html.CommentToken)
		case html.EndTagToken:
			raw := append([]byte(nil), z.Raw()...)
			name, _ := z.TagName()
			if ref.rawOpen == "" {
				ref.foreign.endTag(string(name))
			}
			ref.rawOpen = "" // inside raw text, only the element's own end tag is a tag
			if string(name) == "body" && !ref.bodyEndDone && !ref.foreign.scriptIsMathML() {
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

func (ref *refRewriter) tokenizer() *html.Tokenizer {
	z := html.NewTokenizer(ref.in)
	z.SetMaxBuf(ref.maxTok)
	return z
}

// writeText writes a text or comment token, with the inline rules.
func (ref *refRewriter) writeText(raw []byte, comment bool) {
	if ref.opts.Inline && refTextTokenRewritten(raw, comment) {
		out, n := ref.rules.refInline(string(raw), true)
		ref.stats.InlineRewritten += n
		raw = []byte(out)
	}
	ref.write(raw)
}

// refUnendedCDATA reports a CDATA section cut off by the end of the input.
func refUnendedCDATA(raw []byte) bool {
	const open, end = "<![CDATA[", "]]>"
	s := string(raw)
	return strings.HasPrefix(s, open) && (len(s) < len(open)+len(end) || !strings.HasSuffix(s, end))
}

// startTag acts on a start tag: foreign content, the URL attributes, the
// head injection and the elements whose content is raw text. It returns
// the Tokenizer to go on with, nil when the rest of the page is copied as
// it is (the foreign stack is full).
func (ref *refRewriter) startTag(z *html.Tokenizer, selfClosing bool) (*html.Tokenizer, error) {
	raw := append([]byte(nil), z.Raw()...)
	name, attrs := refTagNameAttrs(z)
	here := ref.bidsBlockedBy()
	foreign := ref.foreign.startTag(name, attrs, selfClosing)
	if ref.foreign.full {
		// Past the stack's bound: the bids go before this tag, the last
		// place known, and the tag and the rest go out as they came.
		ref.stats.DepthExceeded = true
		ref.bidsAtLastPlace(here)
		ref.write(raw)
		return nil, ref.copyRest(z)
	}
	ref.rawOpen = ""
	if foreign && refRawTextElement(name) != "" {
		z.NextIsNotRawText() // an SVG or MathML element: never raw text
	} else if !foreign {
		ref.rawOpen = refRawTextElement(name)
	}
	out, err := ref.rewriteTag(raw)
	if err != nil {
		return nil, err
	}
	ref.write(out)
	if name == "head" && !foreign && !ref.stats.HeadFound {
		ref.stats.HeadFound = true
		ref.write(ref.opts.HeadPrepend)
	}
	if name != "script" || foreign {
		return z, nil
	}
	// The Tokenizer's script data departs from the standard
	// (reference_script_test.go): the text is read here instead.
	z.NextIsNotRawText()
	after := io.MultiReader(bytes.NewReader(bytes.Clone(z.Buffered())), ref.in)
	br := bufio.NewReader(after)
	text, _, err := refReadScript(br)
	if err != nil {
		return nil, err
	}
	if len(text) > 0 {
		ref.writeText(text, false)
	}
	rest, _ := br.Peek(br.Buffered())
	ref.in = io.MultiReader(bytes.NewReader(bytes.Clone(rest)), after)
	return ref.tokenizer(), nil
}

// refTagNameAttrs returns the lower-case name of the Tokenizer's tag and
// its attributes, the first of each name.
func refTagNameAttrs(z *html.Tokenizer) (string, map[string]string) {
	name, more := z.TagName()
	attrs := map[string]string{}
	for more {
		var k, v []byte
		k, v, more = z.TagAttr()
		if _, ok := attrs[string(k)]; !ok {
			attrs[string(k)] = string(v)
		}
	}
	return string(name), attrs
}

// bidsBlockedBy names what a bids script written here would be inside,
// where it would not run: a raw-text element, a CDATA section or MathML.
func (ref *refRewriter) bidsBlockedBy() string {
	if ref.rawOpen != "" {
		return ref.rawOpen
	}
	if ref.foreign.scriptIsMathML() {
		return "math"
	}
	return ""
}

// bidsAtLastPlace writes the bids, if still to come, where the page is
// followed no further, unless they would not run there (blocked).
func (ref *refRewriter) bidsAtLastPlace(blocked string) {
	if ref.bodyEndDone || ref.err != nil {
		return
	}
	ref.bodyEndDone = true
	if blocked != "" {
		ref.stats.BodyEndSkipped = blocked
	} else {
		ref.bodyEnd()
	}
}

// copyRest copies what the Tokenizer has not tokenized, and the rest of
// the input, as it is.
func (ref *refRewriter) copyRest(z *html.Tokenizer) error {
	ref.write(z.Buffered())
	_, err := io.Copy(writerFunc(func(p []byte) (int, error) {
		ref.write(p)
		return len(p), ref.err // stop reading once the destination failed
	}), ref.in)
	if err != nil {
		return err
	}
	return ref.err
}

// end finishes the page at the Tokenizer's error token.
func (ref *refRewriter) end(z *html.Tokenizer) error {
	err := z.Err()
	if errors.Is(err, html.ErrBufferExceeded) {
		// A token larger than MaxTokenBytes: the bids go before it, the
		// last place known (docs/behaviour.md, "SSAT injection"), unless
		// that is inside raw text or MathML.
		ref.stats.Oversize = true
		ref.bidsAtLastPlace(ref.bidsBlockedBy())
	}
	// A tag cut off by the end of the input is the error token's raw
	// bytes; it is still page content.
	ref.write(z.Raw())
	if errors.Is(err, html.ErrBufferExceeded) {
		return ref.copyRest(z) // the rest is copied as is
	}
	if err != io.EOF {
		return err
	}
	// docs/behaviour.md, "SSAT injection": bids after the end of a page
	// that ends in raw text would be that element's text.
	ref.bidsAtLastPlace(ref.bidsBlockedBy())
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
