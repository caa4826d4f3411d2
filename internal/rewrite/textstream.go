package rewrite

import (
	"errors"
	"io"
	"sync"
)

// TextOptions configure one text response rewrite (docs/behaviour.md,
// "Text responses").
type TextOptions struct {
	// OriginHost, RequestHost and RequestScheme are those of Options.
	OriginHost    string
	RequestHost   string
	RequestScheme string
	// Script selects the JavaScript rules: a bare host only right after a
	// quote. Otherwise (CSS, JSON, XML, other text) a bare host is
	// rewritten at any host-name boundary.
	Script bool
}

// TextStats describe one text rewrite.
type TextStats struct {
	Rewritten int   // origin references replaced
	InBytes   int64 // bytes consumed from the source
	OutBytes  int64 // bytes written to the destination
}

// textRewriter is the pooled state of one text rewrite.
type textRewriter struct {
	hosts hostRewriter
	encs  encStream // the escaped forms after the text rules (encoded.go)
	buf   []byte
	dst   io.Writer
	stats TextStats
	err   error
}

var textPool = sync.Pool{New: func() any { return &textRewriter{buf: make([]byte, readSize)} }}

func (t *textRewriter) write(p []byte) {
	if t.err != nil || len(p) == 0 {
		return
	}
	n, err := t.dst.Write(p)
	t.stats.OutBytes += int64(n)
	if err != nil {
		t.err = errors.Join(ErrWrite, err)
	}
}

// RewriteText streams src to dst with the text rules applied. Only the
// bytes of origin references change. It holds, between reads, at most a
// tail of the length of a host reference, never the body. It returns the
// source's error unchanged and write errors wrapped in ErrWrite, as
// Rewrite does.
func RewriteText(dst io.Writer, src io.Reader, opts *TextOptions) (TextStats, error) {
	t := textPool.Get().(*textRewriter)
	defer textPool.Put(t)
	t.dst, t.stats, t.err = dst, TextStats{}, nil
	t.hosts.reset(opts.OriginHost, opts.RequestHost, opts.RequestScheme)
	// A text response gets the escaped forms of a page's inline content
	// (docs/behaviour.md, "Text responses"): a JSON API or a Nuxt payload
	// writes the same percent-encoded share links and \u002F-escaped URLs
	// as the page it serves.
	t.hosts.enc.reset(true, t.hosts.name, opts.RequestHost)
	t.encs = encStream{hosts: &t.hosts, out: t, count: &t.stats.Rewritten, tail: t.encs.tail[:0]}
	err := t.run(src, opts)
	t.dst, t.encs.out, t.encs.hosts, t.encs.count = nil, nil, nil, nil
	return t.stats, err
}

func (t *textRewriter) run(src io.Reader, opts *TextOptions) error {
	kind := kindCSS
	if opts.Script {
		kind = kindScript
	}
	if len(t.hosts.hostB) == 0 {
		n, err := io.CopyBuffer(textCopyWriter{t}, src, t.buf)
		t.stats.InBytes = n
		if t.err != nil {
			return t.err
		}
		return err
	}
	var prev byte
	n, skip := 0, 0
	for {
		m, rerr := readSome(src, t.buf[n:])
		n += m
		t.stats.InBytes += int64(m)
		final := rerr == io.EOF
		used, next, changed := t.hosts.textRun(&t.encs, t.buf[:n], kind, prev, skip, final)
		if final {
			t.encs.finish()
		}
		skip = next
		t.stats.Rewritten += changed
		if used > 0 {
			prev = t.buf[used-1]
		}
		n = copy(t.buf, t.buf[used:n])
		if t.err != nil {
			return t.err
		}
		if rerr != nil {
			// A failed source leaves its tail unwritten: the text is not
			// complete, and the caller must not make it look so.
			if final {
				return nil
			}
			return rerr
		}
	}
}

// textCopyWriter adapts textRewriter.write for io.CopyBuffer.
type textCopyWriter struct{ t *textRewriter }

func (w textCopyWriter) Write(p []byte) (int, error) {
	w.t.write(p)
	if w.t.err != nil {
		return 0, w.t.err
	}
	return len(p), nil
}
