package rewrite

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// entityTable reads the named references of Go's html package (the table
// unescapeAttr decodes with) from its source: each name with its ';' and
// what it decodes to.
func entityTable(t *testing.T) map[string]string {
	t.Helper()
	path := filepath.Join(runtime.GOROOT(), "src", "html", "entity.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatalf("the html entity table: %v", err)
	}
	table := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		kv, ok := n.(*ast.KeyValueExpr)
		if !ok {
			return true
		}
		k, ok := kv.Key.(*ast.BasicLit)
		if !ok || k.Kind != token.STRING {
			return true
		}
		name, _ := strconv.Unquote(k.Value)
		var runes []string
		switch v := kv.Value.(type) {
		case *ast.BasicLit:
			runes = []string{v.Value}
		case *ast.CompositeLit:
			for _, e := range v.Elts {
				runes = append(runes, e.(*ast.BasicLit).Value)
			}
		}
		var out strings.Builder
		for _, r := range runes {
			c, _, _, err := strconv.UnquoteChar(strings.Trim(r, "'"), '\'')
			if err != nil {
				t.Fatalf("%s: %v", r, err)
			}
			out.WriteRune(c)
		}
		table[name] = out.String()
		return true
	})
	if len(table) < 2000 {
		t.Fatalf("read %d entities from %s: the file's shape has changed", len(table), path)
	}
	return table
}

// TestASCIIRefsAreTheTables: isASCIIRef accepts exactly the named
// references of the decoder's table, ended by ';', that decode to an ASCII
// character other than & < > ": every name of the table is asked, and so
// are near misses of each (a letter more, a letter less, the first
// letter's case swapped) that the table does not hold.
func TestASCIIRefsAreTheTables(t *testing.T) {
	table := entityTable(t)
	var wrong []string
	accepted := 0
	for name, v := range table {
		if !strings.HasSuffix(name, ";") {
			continue
		}
		name = strings.TrimSuffix(name, ";")
		want := strings.ContainsFunc(v, func(r rune) bool { return r < 0x80 && !strings.ContainsRune(`&<>"`, r) })
		if isASCIIRef([]byte(name)) != want {
			wrong = append(wrong, fmt.Sprintf("%s: %v", name, !want))
		}
		if want {
			accepted++
		}
		swapped := string(name[0]^0x20) + name[1:]
		for _, miss := range []string{name + "x", name[:len(name)-1], swapped} {
			if _, ok := table[miss+";"]; !ok && isASCIIRef([]byte(miss)) {
				wrong = append(wrong, miss+": true, not in the table")
			}
		}
	}
	sort.Strings(wrong)
	if len(wrong) > 0 || accepted == 0 {
		t.Fatalf("isASCIIRef disagrees with the table (%d accepted): %v", accepted, wrong)
	}
}

// TestRefsMayMakeHostIsConservative: every reference the decoder turns
// into a character a host name may hold (an ASCII letter, digit, - . _ :
// [ ]), named, with and without ';', or numeric, decimal and hex, up to
// past U+10FFFF, with leading zeros, is one refsMayMakeHost reports; and
// &nbsp;, &#160; and the like, which cannot, are not.
func TestRefsMayMakeHostIsConservative(t *testing.T) {
	var h hostRewriter
	h.reset("origin.pub.example", "www.pub.example", "https")
	makesHostByte := func(raw string) bool {
		out := unescapeAttr(raw)
		if out == raw {
			return false
		}
		return strings.ContainsFunc(out, func(r rune) bool {
			return r < 0x80 && (isHostChar(byte(r)) || strings.ContainsRune(":[]", r))
		})
	}
	var refs []string
	for name := range entityTable(t) {
		refs = append(refs, "&"+name, "&"+strings.TrimSuffix(name, ";"), "(&"+name+")")
	}
	for v := 0; v <= 0x220; v++ {
		for _, f := range []string{"&#%d;", "&#%d", "&#x%x;", "&#X%X", "&#000%d;", "&#x00%x"} {
			refs = append(refs, fmt.Sprintf(f, v))
		}
	}
	refs = append(refs, "&#1114112;", "&#x110000;", "&#99999999999999999999;", "&#x2e2e2e2e2e2e2e2e2e;", "&#;", "&#x;")
	for _, raw := range refs {
		may := h.refsMayMakeHost([]byte(raw))
		if makesHostByte(raw) && !may {
			t.Errorf("%q decodes to %q, which may make a host, but refsMayMakeHost says no", raw, unescapeAttr(raw))
		}
	}
	for _, raw := range []string{"&nbsp;", "&#160;", "&#xA0;", "March&nbsp;18", "k&#160;Plzni", "&copy;", "&#8212;", "&amp;", "&quot;", "&#0;", "&#x80;"} {
		if h.refsMayMakeHost([]byte(raw)) {
			t.Errorf("%q: refsMayMakeHost says yes; it decodes to %q", raw, unescapeAttr(raw))
		}
	}
}
