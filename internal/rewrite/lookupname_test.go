package rewrite

import (
	"bytes"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/testutil"
	"golang.org/x/net/html/atom"
)

// actedRef are the elements the scanner acts on by name (docs/behaviour.md:
// the injections in head and body, the charset in meta, foreign content,
// and the raw-text elements), written out apart from tag.go's list.
var actedRef = []string{"head", "body", "meta", "svg", "math", "script", "style", "xmp",
	"iframe", "noembed", "noframes", "noscript", "textarea", "title", "plaintext"}

// lookupNameRef is lookupName written plainly: the name up to the first
// byte that ends a tag name, lower-cased, looked up in x/net/html's atom
// table, kept only when it is one of actedRef.
func lookupNameRef(name []byte) atom.Atom {
	end := bytes.IndexAny(name, " \n\r\t\f/>")
	lower := bytes.ToLower(name[:end])
	if slices.Contains(actedRef, string(lower)) {
		return atom.Lookup(lower)
	}
	return 0
}

// TestLookupNameIsTheAtomTable: every tag name of the corpus, and every
// acted-on name with a letter more, a letter less, in mixed case and with
// each byte that may end it, gets from lookupName what the atom table
// gives.
func TestLookupNameIsTheAtomTable(t *testing.T) {
	names := map[string]bool{}
	for _, n := range actedRef {
		for _, v := range []string{n, strings.ToUpper(n), strings.ToUpper(n[:1]) + n[1:], n[:len(n)-1] + strings.ToUpper(n[len(n)-1:]), n + "x", n[:len(n)-1], n + "-", n + "1"} {
			names[v] = true
		}
	}
	tagName := regexp.MustCompile(`</?([A-Za-z][^\s/>]*)`)
	for _, f := range testutil.RequireCorpus(t) {
		page, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range tagName.FindAllSubmatch(page, -1) {
			names[string(m[1])] = true
		}
	}
	acted := 0
	for n := range names {
		for _, end := range []string{">", " ", "/>", "\t", "\n", "\f", "\r"} {
			raw := []byte(n + end)
			got, want := lookupName(raw), lookupNameRef(raw)
			if got != want {
				t.Errorf("lookupName(%q) = %v, the atom table's %v", raw, got, want)
			}
			if got != 0 {
				acted++
			}
		}
	}
	if acted == 0 || len(names) < 100 {
		t.Fatalf("%d names, %d acted on: too few to tell", len(names), acted)
	}
}
