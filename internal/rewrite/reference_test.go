package rewrite

import (
	"bytes"
	"io"

	"golang.org/x/net/html"
)

// referenceRewrite is the rewriter built on golang.org/x/net/html's
// Tokenizer that served pages before the scanner. It shares the attribute
// and URL rules (rewriteTag) and the injections with the scanner; only the
// tokenization differs, so comparing the two tests the scanner.
func referenceRewrite(dst io.Writer, src io.Reader, opts *Options) (Stats, error) {
	cr := &countingReader{r: src}
	rw := &rewriter{}
	rw.reset(dst, opts)
	z := html.NewTokenizer(cr)
	z.SetMaxBuf(rw.maxTok)
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
				rw.bodyEnd()
			}
			return rw.stats, rw.err
		case html.StartTagToken, html.SelfClosingTagToken:
			isHead := !rw.stats.HeadFound && bytes.EqualFold(tagName(raw), []byte("head"))
			if out := rw.rewriteTag(raw); out != nil {
				rw.write(out)
			} else {
				rw.write(raw)
			}
			if isHead {
				rw.stats.HeadFound = true
				rw.write(opts.HeadPrepend)
			}
		case html.EndTagToken:
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
