package rewrite

import (
	"encoding/json"
	"reflect"
	"regexp"
	"testing"

	"github.com/ssatd/ssatd/internal/ssat"
)

// nonASCII are values whose UTF-8 bytes would be misread in a page served
// in another charset: Latin-1 and windows-1252 letters and signs, Japanese,
// a character above U+FFFF, and the JavaScript line terminators.
var nonASCII = []string{
	"Café €5", "日本語の広告", "emoji 😀 and 𝄞", "line\u2028sep\u2029para", "\u0080\u00ff\u0100\uffff",
	`<b>"Café"</b> & </script>`,
}

var jsonParseLiteral = regexp.MustCompile(`JSON\.parse\("((?:[^"\\]|\\.)*)"\)`)

// decodeInjected reads the string literal handed to JSON.parse in an
// injected script as a JSON string (the escapes written are a subset of
// both grammars), then the JSON text it holds into v.
func decodeInjected(t *testing.T, script []byte, v any) {
	t.Helper()
	m := jsonParseLiteral.FindSubmatch(script)
	if m == nil {
		t.Fatalf("no JSON.parse literal in %s", script)
	}
	var text string
	if err := json.Unmarshal([]byte(`"`+string(m[1])+`"`), &text); err != nil {
		t.Fatalf("literal is not a JSON string: %v\n%s", err, m[1])
	}
	if err := json.Unmarshal([]byte(text), v); err != nil {
		t.Fatalf("literal does not hold JSON: %v\n%s", err, text)
	}
}

func requireASCII(t *testing.T, what string, b []byte) {
	t.Helper()
	for i, c := range b {
		if c >= 0x80 {
			t.Fatalf("%s has byte %#x at %d: %q", what, c, i, b)
		}
	}
}

// Regression (issue 18, "injected scripts are UTF-8 in pages that are
// not"): the slot and bid scripts wrote non-ASCII characters as UTF-8,
// which a windows-1252 page shows as "CafÃ© â‚¬5".
func TestInjectedScriptsAreASCII(t *testing.T) {
	for _, v := range nonASCII {
		slots := []ssat.Slot{{ID: v, DivID: v, GAMUnitPath: v, Formats: [][]int{{300, 250}}, Targeting: map[string]any{v: []any{v}}}}
		bids := map[string]ssat.Bid{v: {Adm: v, HbBidder: v, HbPb: v, HbAdid: v, W: 300, H: 250}}
		a, err := AdSlotsScript(slots)
		if err != nil {
			t.Fatal(err)
		}
		b, err := BidsScript(bids)
		if err != nil {
			t.Fatal(err)
		}
		requireASCII(t, "ad slots script", a)
		requireASCII(t, "bids script", b)
		var gotSlots []ssat.Slot
		decodeInjected(t, a, &gotSlots)
		if !reflect.DeepEqual(gotSlots, slots) {
			t.Errorf("slots for %q decode as %+v", v, gotSlots)
		}
		var gotBids map[string]ssat.Bid
		decodeInjected(t, b, &gotBids)
		if !reflect.DeepEqual(gotBids, bids) {
			t.Errorf("bids for %q decode as %+v", v, gotBids)
		}
	}
	requireASCII(t, "bundle tag", BundleTag("0123456789abcdef"))
}

// Bytes that are not UTF-8 (json.Marshal turns them into U+FFFD) are
// escaped too, never copied.
func TestInjectedScriptsEscapeInvalidUTF8(t *testing.T) {
	b, err := BidsScript(map[string]ssat.Bid{"s": {Adm: "a\xe9b\xff\xc3"}})
	if err != nil {
		t.Fatal(err)
	}
	requireASCII(t, "bids script", b)
	var got map[string]ssat.Bid
	decodeInjected(t, b, &got)
	if got["s"].Adm != "a\ufffdb\ufffd\ufffd" {
		t.Errorf("adm decodes as %q", got["s"].Adm)
	}
}
