package rewrite

import (
	"bytes"
	"io"

	"golang.org/x/net/html"
)

// referenceRewrite is the rewriter built on golang.org/x/net/html's
// Tokenizer that served pages before the scanner. It shares the attribute
// grammar (scanAttrs) and the injections with the scanner; only the
// tokenization differs, so comparing the two tests the scanner. Its URL
// rules are the oracle copy (urls_oracle_test.go) of those that served
// with it, so the comparison also tests the allocation-free URL rules.
func referenceRewrite(dst io.Writer, src io.Reader, opts *Options) (Stats, error) {
	cr := &countingReader{r: src}
	rw := &rewriter{}
	rw.reset(dst, opts, false)
	oracle := newOracleHostRewriter(opts.OriginHost, opts.RequestHost, opts.RequestScheme, nil)
	z := html.NewTokenizer(cr)
	z.SetMaxBuf(rw.maxTok)
	// rawOpen is the element whose raw text or RCDATA the tokenizer is in
	// (it reports the content as text until the matching end tag).
	rawOpen := ""
	for rw.err == nil {
		tt := z.Next()
		raw := z.Raw()
		switch tt {
		case html.ErrorToken:
			// A tag cut off by the end of input is returned as the error
			// token's raw bytes; it is still page content.
			rw.write(raw)
			err := z.Err()
			if err == html.ErrBufferExceeded {
				err = referenceCopyRest(rw, z.Buffered(), cr)
			}
			rw.stats.InBytes = cr.n
			if err != io.EOF {
				return rw.stats, err
			}
			if !rw.bodyEndDone && rw.err == nil {
				if rawOpen != "" && !rw.stats.Oversize {
					rw.stats.BodyEndSkipped = rawOpen
				} else {
					rw.bodyEnd()
				}
			}
			return rw.stats, rw.err
		case html.StartTagToken, html.SelfClosingTagToken:
			rawOpen = rawTextElement(tagName(raw))
			isHead := !rw.stats.HeadFound && bytes.EqualFold(tagName(raw), []byte("head"))
			if out := referenceRewriteTag(rw, &oracle, raw); out != nil {
				rw.write(out)
			} else {
				rw.write(raw)
			}
			if isHead {
				rw.stats.HeadFound = true
				rw.write(opts.HeadPrepend)
			}
		case html.EndTagToken:
			rawOpen = "" // inside raw text, only the element's own end tag is a tag
			if !rw.bodyEndDone && bytes.EqualFold(tagName(raw), []byte("body")) {
				rw.bodyEndDone = true
				rw.stats.BodyEndFound = true
				rw.bodyEnd()
			}
			rw.write(raw)
		default:
			rw.write(raw)
		}
	}
	rw.stats.InBytes = cr.n
	return rw.stats, rw.err
}

// referenceCopyRest copies the page's remaining bytes unchanged after a
// token too large to hold. It returns io.EOF when the source ended cleanly.
func referenceCopyRest(rw *rewriter, buffered []byte, src io.Reader) error {
	rw.stats.Oversize = true
	rw.write(buffered)
	buf := make([]byte, 32<<10)
	for rw.err == nil {
		n, err := src.Read(buf)
		rw.write(buf[:n])
		if err != nil {
			return err
		}
	}
	return io.EOF
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

// rawTextElement returns the lower-case name of an element whose content
// the tokenizer reads as raw text or RCDATA (the HTML standard's raw text
// and escapable raw text elements, plus plaintext, xmp, iframe, noembed,
// noframes and noscript as golang.org/x/net/html treats them), else "".
func rawTextElement(name []byte) string {
	for _, n := range []string{"script", "style", "textarea", "title", "plaintext", "xmp", "iframe", "noembed", "noframes", "noscript"} {
		if bytes.EqualFold(name, []byte(n)) {
			return n
		}
	}
	return ""
}

// referenceRewriteTag returns a start tag with its URL attributes rewritten
// by the oracle's URL rules, or nil when none changes.
func referenceRewriteTag(rw *rewriter, h *oracleHostRewriter, raw []byte) []byte {
	if len(h.hostB) == 0 || (!containsFold(raw, h.hostB) && bytes.IndexByte(raw, '&') < 0) {
		return nil
	}
	var out []byte
	last := 0
	for _, a := range scanAttrs(raw, nil) {
		if !a.hasValue {
			continue
		}
		kind := classifyAttr(raw[a.nameStart:a.nameEnd])
		if kind == kindNone {
			continue
		}
		nv, changed := h.rewriteRawValue(raw[a.valStart:a.valEnd], a.quote, kind)
		if !changed {
			continue
		}
		out = append(out, raw[last:a.valStart]...)
		if a.quote == 0 && needsQuotes(nv) {
			out = append(out, '"')
			out = append(out, nv...)
			out = append(out, '"')
		} else {
			out = append(out, nv...)
		}
		last = a.valEnd
		rw.stats.URLsRewritten++
	}
	if last == 0 {
		return nil
	}
	return append(out, raw[last:]...)
}
