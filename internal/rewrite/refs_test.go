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

// TestASCIIRefsAreTheTables: asciiRefs is exactly the named references of
// the decoder's table, ended by ';', that decode to an ASCII character
// other than & < > ".
func TestASCIIRefsAreTheTables(t *testing.T) {
	var want, got []string
	for name, v := range entityTable(t) {
		if !strings.HasSuffix(name, ";") {
			continue
		}
		if strings.ContainsFunc(v, func(r rune) bool { return r < 0x80 && !strings.ContainsRune(`&<>"`, r) }) {
			want = append(want, strings.TrimSuffix(name, ";"))
		}
	}
	for name := range asciiRefs {
		got = append(got, name)
	}
	sort.Strings(want)
	sort.Strings(got)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("asciiRefs = %v\nthe table's = %v", got, want)
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
