package rewrite

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// The scanner against golang.org/x/net/html's tree builder: where html.Parse
// puts elements and text, the scanner must see them there too. The checks
// read only the trees and the rewrite's output and stats; they share no
// code with the scanner.

const (
	treeBidsText = "window.BIDS=1"
	treeBids     = "<script>" + treeBidsText + "</script>"
	treeOrigin   = "origin.pub.example"
	treeRequest  = "www.pub.example"
)

// treeSeeds are the cases of issue 18 (foreign content read as HTML) and
// variations on them.
var treeSeeds = []string{
	`<body><svg><title>icon</svg><a href="http://origin.pub.example/x">x</a></body>`,
	`<body><svg><style>svg{}</svg><a href="http://origin.pub.example/x">x</a></body>`,
	`<body><svg><![CDATA[ a > b </body> ]]></svg><a href="http://origin.pub.example/x">x</a></body>`,
	`<head></head><body><svg><title>icon</title></svg><a href="//origin.pub.example/">x</a></body>`,
	`<head></head><body><math><mtext><title><a href="//origin.pub.example/">x</a></title></mtext></math></body>`,
	`<head></head><body><svg><foreignObject><style></svg><a href="//origin.pub.example/"></style></foreignObject></svg></body>`,
	`<head></head><body><svg><desc><div><![CDATA[<a href="//origin.pub.example/">]]></div></desc></svg></body>`,
	`<head></head><body><svg><p><a href="//origin.pub.example/"><title>t</title></body>`,
	`<head></head><body><svg/><title><a href="//origin.pub.example/"></title></body>`,
	`<head></head><body><math><annotation-xml encoding="text/html"><textarea></math></textarea><a href="//origin.pub.example/"></body>`,
	`<head></head><body><math><annotation-xml><svg><script>a</script></svg></annotation-xml></math></body>`,
	`<head></head><body><svg><script>if (a < b) x()</script><a href="//origin.pub.example/"></svg></body>`,
	`<head></head><body><math><mi><mglyph><style></math><a href="//origin.pub.example/"></body>`,
	`<head></head><body><svg><font color=red><style>x</style></svg><a href="//origin.pub.example/"></body>`,
	`<head></head><body><math></body></math>`, `<head></head><body><math><mi></body>`,
	`<head></head><body><svg><![CDATA[ ]] ]]]><a href="//origin.pub.example/"></svg></body>`,
	`<head></head><svg><![CDATA[ unterminated`, `<head></head><svg><style>`,
	// Issue 30: past the foreign stack's cap the scanner follows nothing.
	`<head></head><body><svg>` + strings.Repeat(`<g>`, maxForeignDepth-1) + `<foreignObject><script>var s = "</body>";</script></foreignObject></svg><a href="//origin.pub.example/"></body>`,
	`<head></head><body><svg>` + strings.Repeat(`<g>`, maxForeignDepth-2) + `<foreignObject><script>var s = "</body>";</script></foreignObject></svg><a href="//origin.pub.example/"></body>`,
	`<head></head><body><svg>` + strings.Repeat(`<g>`, maxForeignDepth) + `<foreignObject><style></svg><a href="//origin.pub.example/"></style></body>`,
	`<head></head><body><math>` + strings.Repeat(`<mrow>`, maxForeignDepth-1) + `<mi><script>var s = "</body>";</script></math></body>`,
	`<head></head><body><svg><foreignObject>` + strings.Repeat(`<div>`, maxForeignDepth-2) + `<p><script>"</body>"</script></body>`,
	`<head></head><body><svg><desc>` + strings.Repeat(`<svg>`, maxForeignDepth) + `<title><textarea></body>`,
	`<head></head><body><svg><g><g><g><foreignObject><script>"</body>"</script>`,
}

// FuzzTreeDifferential rewrites arbitrary input and compares what it did
// with html.Parse's trees of the input and the output (treeCheck).
func FuzzTreeDifferential(f *testing.F) {
	for _, s := range append(append([]string{}, treeSeeds...), fuzzSeeds...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, c := range treeConfigs {
			treeCheck(t, in, c)
		}
	})
}

func TestTreeDifferentialSeeds(t *testing.T) {
	for _, s := range append(append([]string{}, treeSeeds...), treeInlineSeeds...) {
		for _, c := range treeConfigs {
			treeCheck(t, []byte(s), c)
		}
	}
}

// treeConfig is a rewrite treeCheck runs: with the inline rules or not,
// and with the scanner's caps lowered (the foreign stack's depth,
// MaxTokenBytes), so that short inputs reach them.
type treeConfig struct {
	inline        bool
	depth, maxTok int
}

var treeConfigs = []treeConfig{{}, {inline: true}, {depth: 3, maxTok: 48}}

// rewriteTree is Rewrite under c.
func rewriteTree(dst io.Writer, src io.Reader, o *Options, c treeConfig) (Stats, error) {
	o.Inline, o.MaxTokenBytes = c.inline, c.maxTok
	rw := pool.Get().(*rewriter)
	rw.reset(dst, o)
	if c.depth > 0 {
		rw.fdepth = c.depth
	}
	err := rw.run(src)
	st := rw.stats
	rw.release()
	return st, err
}

// treeInlineSeeds name the origin where only the inline rules look.
var treeInlineSeeds = []string{
	`<head><title>//origin.pub.example</title></head><body><!-- https://origin.pub.example/ --><p>http://ORIGIN.pub.example/a</p></body>`,
	`<body><textarea>https%3A%2F%2Forigin.pub.example%2F</textarea><noscript><img src="//origin.pub.example/p"></noscript></body>`,
	`<body><div data-u="https:\/\/origin.pub.example\/" title="x https%253A%252F%252Forigin.pub.example"></div></body>`,
	`<body><svg xmlns="http://origin.pub.example/ns"><text>//origin.pub.example</text><![CDATA[ //origin.pub.example ]]></svg></body>`,
	`<body><script type="text/template"><a href="https://origin.pub.example/"></script><script>"https:\u002F\u002Forigin.pub.example"</script></body>`,
}

// treeCheck rewrites in with URL rewriting and the bids injection, and
// checks against the html.Parse trees:
//   - the tree of the output, without the bids script, is the tree of the
//     input; only URL attribute values differ, and only where the input's
//     named the origin and the output's names the request host;
//   - no href, src or action in the output tree still starts with the
//     origin (a link the scanner did not see as a tag);
//   - the bids script is a script element that runs (HTML or SVG) holding
//     exactly the script's text, except at the very end of a page that
//     ends inside a comment or an unfinished tag, where it is lost; and it
//     is left out only where, appended at the end, it would not be one, or
//     past a cap, where the scanner cannot tell;
//   - past a cap (Stats.Oversize, Stats.DepthExceeded), the bids script
//     written there is followed by the rest of the input as it is.
//
// With inline, the text, comments and other attribute values may differ
// too, but only where the inline rules (refInline) change them: both sides
// rewritten by those rules are the same (the tree holds decoded text,
// where the rules apply to the page's raw bytes, so the output's own text
// is not compared with the rules' result directly).
func treeCheck(t *testing.T, in []byte, c treeConfig) {
	t.Helper()
	var out bytes.Buffer
	st, err := rewriteTree(&out, bytes.NewReader(in), &Options{
		OriginHost: treeOrigin, RequestHost: treeRequest, RequestScheme: "https",
		HeadPrepend: []byte{}, BodyEnd: func() []byte { return []byte(treeBids) },
	}, c)
	if err != nil {
		t.Fatal(err)
	}
	inline := c.inline
	if st.Oversize || st.DepthExceeded {
		// The bids either went at a </body> before the cap, or at the cap,
		// where the input follows them unchanged.
		if i := bytes.Index(out.Bytes(), []byte(treeBids)); i >= 0 {
			rest := out.Bytes()[i+len(treeBids):]
			if !bytes.HasSuffix(in, rest) && !bytes.HasPrefix(bytes.ToLower(rest), []byte("</body")) {
				t.Fatalf("past a cap the input is not copied as it is after the bids\n in: %q\nout: %q", in, out.Bytes())
			}
		}
	}
	inDoc, outDoc := mustParse(t, in), mustParse(t, out.Bytes())
	if closesForeignFromOutside(in, inDoc) {
		return // documented as not followed (foreign.go)
	}
	if !treeBidsUndefined(in, outDoc) && checkBidsPlacement(t, in, out.Bytes(), outDoc, st) {
		// Lost at the end, the bids may have made the unfinished tag into
		// an element: the rest of the page is compared without them.
		outDoc = mustParse(t, bytes.TrimSuffix(out.Bytes(), []byte(treeBids)))
	}
	removeBids(outDoc)
	mergeText(inDoc)
	mergeText(outDoc)
	var allow func(x, y string) bool
	if inline {
		rules := newRefRules(treeOrigin, treeRequest, "https")
		allow = func(x, y string) bool {
			rx, _ := rules.refInline(x, true)
			ry, _ := rules.refInline(y, true)
			return rx == ry && strings.Contains(y, treeRequest)
		}
	}
	if err := sameTree(inDoc, outDoc, allow); err != nil {
		t.Fatalf("the output's tree differs from the input's: %v\n in: %q\nout: %q", err, in, out.Bytes())
	}
	if st.Oversize || st.DepthExceeded {
		return
	}
	for n := range outDoc.Descendants() {
		for _, a := range n.Attr {
			if a.Namespace == "" && (a.Key == "href" || a.Key == "src" || a.Key == "action") && namesOrigin(a.Val) {
				t.Fatalf("<%s %s=%q> still names the origin\n in: %q\nout: %q", n.Data, a.Key, a.Val, in, out.Bytes())
			}
		}
	}
}

// closesForeignFromOutside reports input whose tree the scanner is
// documented not to follow (foreign.go): after an <svg> or <math> start
// tag, an end tag that names an HTML element of the page, which may close
// the foreign content from outside ("<div><svg></div>"). </body>, </html>
// and </br> never close an element there.
func closesForeignFromOutside(in []byte, inDoc *html.Node) bool {
	l := strings.ToLower(string(in))
	start := -1
	for _, root := range []string{"<svg", "<math"} {
		if i := strings.Index(l, root); i >= 0 && (start < 0 || i < start) {
			start = i
		}
	}
	if start < 0 {
		return false
	}
	names := map[string]bool{}
	for n := range inDoc.Descendants() {
		if n.Type == html.ElementNode && n.Namespace == "" {
			names[n.Data] = true
		}
	}
	delete(names, "body")
	delete(names, "html")
	delete(names, "br")
	for rest := l[start:]; ; {
		i := strings.Index(rest, "</")
		if i < 0 {
			return false
		}
		rest = rest[i+2:]
		end := strings.IndexAny(rest, " \t\n\f\r/>")
		if end < 0 {
			end = len(rest)
		}
		if names[rest[:end]] {
			return true
		}
	}
}

func mustParse(t *testing.T, b []byte) *html.Node {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// treeBidsUndefined reports pages where html.Parse itself drops scripts:
// a frameset document, and one that mixes <template> with SVG or MathML,
// after which x/net/html ignores the rest of the page (its own TODO in
// inHeadIM).
func treeBidsUndefined(in []byte, outDoc *html.Node) bool {
	for n := range outDoc.Descendants() {
		if n.Type == html.ElementNode && n.Data == "frameset" {
			return true
		}
	}
	l := bytes.ToLower(in)
	return bytes.Contains(l, []byte("<template")) && (bytes.Contains(l, []byte("<svg")) || bytes.Contains(l, []byte("<math")))
}

// checkBidsPlacement checks where the bids script went; it reports
// whether it was lost at the end of the page.
func checkBidsPlacement(t *testing.T, in, out []byte, outDoc *html.Node, st Stats) (lost bool) {
	t.Helper()
	switch n := bytes.Count(out, []byte(treeBids)); {
	case n > 1:
		t.Fatalf("the bids script is written %d times\n in: %q", n, in)
	case n == 1:
		running, elsewhere := findBids(outDoc)
		if running == 1 && elsewhere == "" {
			return false
		}
		atEnd := bytes.HasSuffix(out, []byte(treeBids)) && !st.BodyEndFound
		if atEnd && running == 0 && endSwallowsMarkup(t, in) {
			return true // the page ends inside a comment or an unfinished tag
		}
		t.Fatalf("the bids script is not one running script element (%d running, also in %q)\n in: %q\nout: %q",
			running, elsewhere, in, out)
	case st.HeadFound && st.BodyEndSkipped == "":
		t.Fatalf("the bids script is missing, and not reported skipped\n in: %q\nout: %q", in, out)
	case st.BodyEndSkipped != "" && (st.Oversize || st.DepthExceeded):
		// Left out at the cap: the end of the page is no place known.
	case st.BodyEndSkipped != "":
		appended := mustParse(t, append(append([]byte{}, out...), treeBids...))
		if running, elsewhere := findBids(appended); running == 1 && elsewhere == "" {
			t.Fatalf("the bids script was skipped (%q), yet at the end of the page it would run\n in: %q", st.BodyEndSkipped, in)
		}
	}
	return false
}

// endSwallowsMarkup reports whether markup appended to in is lost in a
// comment, a doctype or an unfinished tag: a probe element appended is
// neither an element of the tree nor text (as it would be in raw text, a
// CDATA section or plaintext).
func endSwallowsMarkup(t *testing.T, in []byte) bool {
	const probe = `<b id=probe-7f3a>`
	doc := mustParse(t, append(append([]byte{}, in...), probe...))
	for n := range doc.Descendants() {
		switch n.Type {
		case html.ElementNode:
			if n.Data == "b" && len(n.Attr) == 1 && n.Attr[0].Val == "probe-7f3a" {
				return false
			}
		case html.TextNode:
			if strings.Contains(n.Data, "probe-7f3a") {
				return false
			}
		}
	}
	return true
}

// findBids counts the script elements that run (HTML or SVG) and hold
// exactly the bids script's text, and names a kind of node that holds
// that text otherwise.
func findBids(doc *html.Node) (running int, elsewhere string) {
	for n := range doc.Descendants() {
		switch n.Type {
		case html.ElementNode:
			if n.Data == "script" && (n.Namespace == "" || n.Namespace == "svg") &&
				n.FirstChild != nil && n.FirstChild == n.LastChild && n.FirstChild.Type == html.TextNode && n.FirstChild.Data == treeBidsText {
				running++
			}
			for _, a := range n.Attr {
				if strings.Contains(a.Val, treeBidsText) {
					elsewhere = "attribute"
				}
			}
		case html.TextNode:
			p := n.Parent
			isRunning := p != nil && p.Data == "script" && (p.Namespace == "" || p.Namespace == "svg") && n.Data == treeBidsText && p.FirstChild == p.LastChild
			if strings.Contains(n.Data, treeBidsText) && !isRunning {
				elsewhere = fmt.Sprintf("text of <%s %s>", p.Namespace, p.Data)
			}
		case html.CommentNode:
			if strings.Contains(n.Data, treeBidsText) {
				elsewhere = "comment"
			}
		}
	}
	return running, elsewhere
}

// removeBids takes the running bids script elements out of the tree.
func removeBids(doc *html.Node) {
	var found []*html.Node
	for n := range doc.Descendants() {
		if n.Type == html.ElementNode && n.Data == "script" && n.FirstChild != nil && n.FirstChild.Data == treeBidsText {
			found = append(found, n)
		}
	}
	for _, n := range found {
		n.Parent.RemoveChild(n)
	}
}

// mergeText joins adjacent text nodes, which removing a script leaves.
func mergeText(doc *html.Node) {
	for n := range doc.Descendants() {
		for n.Type == html.TextNode && n.NextSibling != nil && n.NextSibling.Type == html.TextNode {
			next := n.NextSibling
			n.Data += next.Data
			n.Parent.RemoveChild(next)
		}
	}
}

func isURLAttr(a html.Attribute) bool {
	switch a.Key {
	case "href", "src", "action", "srcset", "imagesrcset":
		return a.Namespace == ""
	}
	return false
}

// namesOrigin reports whether a URL value starts with the origin in one of
// the forms every rule rewrites.
func namesOrigin(v string) bool {
	l := strings.ToLower(v)
	for _, p := range []string{"http://", "https://", "//"} {
		if strings.HasPrefix(l, p+treeOrigin+"/") {
			return true
		}
	}
	return false
}

// sameTree compares two trees node by node. URL attribute values may
// differ only from a value naming the origin to one naming the request
// host; text, comments and the other attribute values only where allow
// (when set) accepts the difference.
func sameTree(a, b *html.Node, allow func(x, y string) bool) error {
	textLike := a.Type == b.Type && (a.Type == html.TextNode || a.Type == html.CommentNode)
	if a.Type != b.Type || a.Namespace != b.Namespace || a.Data != b.Data && !(textLike && allow != nil && allow(a.Data, b.Data)) {
		return fmt.Errorf("node %q (%s) against %q (%s)", a.Data, a.Namespace, b.Data, b.Namespace)
	}
	if len(a.Attr) != len(b.Attr) {
		return fmt.Errorf("<%s>: attributes %v against %v", a.Data, a.Attr, b.Attr)
	}
	for i, x := range a.Attr {
		y := b.Attr[i]
		if x.Key != y.Key || x.Namespace != y.Namespace {
			return fmt.Errorf("<%s>: attribute %v against %v", a.Data, x, y)
		}
		if x.Val == y.Val {
			continue
		}
		if allow != nil && allow(x.Val, y.Val) && x.Key != "xmlns" && !strings.HasPrefix(x.Key, "xmlns:") && x.Namespace != "xmlns" {
			continue
		}
		if !isURLAttr(x) || !strings.Contains(strings.ToLower(x.Val), treeOrigin) || !strings.Contains(y.Val, treeRequest) {
			return fmt.Errorf("<%s>: %s=%q became %q", a.Data, x.Key, x.Val, y.Val)
		}
	}
	ca, cb := a.FirstChild, b.FirstChild
	for ; ca != nil && cb != nil; ca, cb = ca.NextSibling, cb.NextSibling {
		if err := sameTree(ca, cb, allow); err != nil {
			return fmt.Errorf("in <%s>: %w", a.Data, err)
		}
	}
	if ca != nil || cb != nil {
		return fmt.Errorf("<%s>: a different number of children", a.Data)
	}
	return nil
}
