package rewrite

import (
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/ssat"

	"github.com/ssatd/ssatd/internal/testutil"
)

// hostile values try to leave the script element or the string literal.
var hostile = []string{
	`</script><script>alert(1)</script>`,
	`<!--`, `<script>`, `"quoted" 'single'`, `back\slash\`, "line\u2028sep\u2029para",
	"new\nline\r", `&amp; & <b>`, `\u003C/script>`, "\x00nul",
}

var scriptBody = regexp.MustCompile(`(?s)^<script>(.*)</script>$`)

func TestScriptEscapingCannotBreakOut(t *testing.T) {
	for _, h := range hostile {
		slots := []ssat.Slot{{ID: h, DivID: h, GAMUnitPath: h, Formats: [][]int{{300, 250}}, Targeting: map[string]any{h: h}}}
		bids := map[string]ssat.Bid{h: {Adm: h, HbBidder: h, HbPb: h, HbAdid: h, W: 1, H: 2}}
		a, err := AdSlotsScript(slots)
		if err != nil {
			t.Fatal(err)
		}
		b, err := BidsScript(bids)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{string(a), string(b)} {
			m := scriptBody.FindStringSubmatch(s)
			if m == nil {
				t.Fatalf("not one script element: %s", s)
			}
			inner := strings.ToLower(m[1])
			for _, bad := range []string{"</script", "<!--", "<script", "\u2028", "\u2029", "\n", "\r"} {
				if strings.Contains(inner, bad) {
					t.Errorf("script body for %q contains %q: %s", h, bad, s)
				}
			}
		}
	}
}

// With Node.js available, run the scripts and check the values arrive intact.
func TestScriptsEvaluateToOriginalValues(t *testing.T) {
	node := testutil.RequireTool(t, "node", "nodejs")
	for _, h := range hostile {
		slots := []ssat.Slot{{ID: h, Formats: [][]int{{728, 90}}, Targeting: map[string]any{"k": []string{h}}}}
		bids := map[string]ssat.Bid{h: {Adm: h, W: 728, H: 90}}
		a, _ := AdSlotsScript(slots)
		b, _ := BidsScript(bids)
		js := "var window={};" + scriptBody.FindStringSubmatch(string(a))[1] + ";" +
			scriptBody.FindStringSubmatch(string(b))[1] +
			";process.stdout.write(JSON.stringify({s:window.tsjs.adSlots,b:window.tsjs.bids}))"
		out, err := exec.Command(node, "-e", js).Output()
		if err != nil {
			t.Fatalf("node failed for %q: %v", h, err)
		}
		var got struct {
			S []ssat.Slot
			B map[string]ssat.Bid
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("bad node output %s: %v", out, err)
		}
		if len(got.S) != 1 || got.S[0].ID != h || got.S[0].DivID != "" || got.B[h].Adm != h {
			t.Errorf("value %q came back as %+v", h, got)
		}
	}
}

func TestAdSlotsJSONShape(t *testing.T) {
	a, err := AdSlotsScript([]ssat.Slot{{ID: "top", DivID: "top", Formats: [][]int{{728, 90}}, GAMUnitPath: "/1/top"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `<script>(window.tsjs=window.tsjs||{}).adSlots=JSON.parse("[{\"div_id\":\"top\",\"formats\":[[728,90]],\"gam_unit_path\":\"/1/top\",\"id\":\"top\",\"targeting\":{}}]");</script>`
	if string(a) != want {
		t.Fatalf("got  %s\nwant %s", a, want)
	}
	b, _ := BidsScript(nil)
	if !strings.Contains(string(b), `JSON.parse("{}")`) {
		t.Fatalf("empty bids: %s", b)
	}
}

// Regression: AdSlotsScript filled nil formats and targeting in the
// caller's slice, which the auction goroutine was reading (a data race
// found by -race in the proxy tests).
func TestAdSlotsScriptDoesNotMutateSlots(t *testing.T) {
	slots := []ssat.Slot{{ID: "a"}}
	if _, err := AdSlotsScript(slots); err != nil {
		t.Fatal(err)
	}
	if slots[0].Formats != nil || slots[0].Targeting != nil {
		t.Fatalf("caller's slot changed: %+v", slots[0])
	}
}
