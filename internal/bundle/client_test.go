package bundle

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/testutil"
)

// clientStub runs the built-in bundle under node with the few browser
// objects it touches at load, a page that declared one slot, and fetch
// recording what requestAds POSTs; the case's steps then run and the
// recorded requests are printed.
const clientStub = `
const fs = require('fs');
const calls = [];
globalThis.window = globalThis;
globalThis.location = { pathname: '/', href: 'http://x.test/' };
globalThis.history = { pushState() {}, replaceState() {} };
globalThis.document = { readyState: 'loading', addEventListener() {}, getElementById() { return null; },
  querySelector() { return null; }, querySelectorAll() { return []; } };
globalThis.addEventListener = () => {};
globalThis.requestAnimationFrame = () => 0;
globalThis.fetch = (url, init) => { calls.push({ url, body: JSON.parse(init.body) }); return new Promise(() => {}); };
window.tsjs = { adSlots: [{ id: 'top', div_id: 'ad-top', formats: [[728, 90]] }] };
const before = process.argv[2];
if (before) eval(before);
eval(fs.readFileSync(process.argv[1], 'utf8'));
const t = window.tsjs;
eval(process.argv[3]);
console.log(JSON.stringify(calls));
`

// TestBuiltInRequestAdsAuctionsOnlyRegisteredUnits: like tsjs's
// requestAds (core/request.ts, core/registry.ts), the built-in bundle's
// asks POST /auction for the units added with addAdUnits alone, none when
// none were added (it used to make one of every declared slot); a unit
// added again is merged over the first ({...old, ...new}); functions
// queued on tsjs.que before the bundle ran run (core/queue.ts).
func TestBuiltInRequestAdsAuctionsOnlyRegisteredUnits(t *testing.T) {
	node := testutil.RequireTool(t, "node")
	bundleFile := filepath.Join(t.TempDir(), "tsjs.js")
	if err := os.WriteFile(bundleFile, JS(), 0o600); err != nil {
		t.Fatal(err)
	}
	type unit struct {
		Code       string           `json:"code"`
		MediaTypes map[string]any   `json:"mediaTypes"`
		Bids       []map[string]any `json:"bids"`
	}
	banner := func(w, h float64) map[string]any {
		return map[string]any{"banner": map[string]any{"sizes": []any{[]any{w, h}}}}
	}
	tests := []struct {
		name, before, steps string
		want                [][]unit
	}{
		{"none registered", "", `t.requestAds()`, [][]unit{{}}},
		{"registered and merged", "",
			`t.addAdUnits([{code: 'a', mediaTypes: {banner: {sizes: [[300, 250]]}}, bids: [{bidder: 'x', params: {p: 1}}]}, {code: 'b'}]);
			 t.addAdUnits({code: 'a', bids: [{bidder: 'y'}]}); t.addAdUnits({mediaTypes: {}}); t.requestAds()`,
			[][]unit{{{"a", banner(300, 250), []map[string]any{{"bidder": "y", "params": map[string]any{}}}}, {"b", map[string]any{}, []map[string]any{}}}}},
		{"queued before load", `window.tsjs.que = [function () { this.addAdUnits({code: 'q', mediaTypes: {banner: {sizes: [[1, 1]]}}}); }]`,
			`t.que.push(function () { this.requestAds(); })`,
			[][]unit{{{"q", banner(1, 1), []map[string]any{}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := exec.Command(node, "-e", clientStub, "--", bundleFile, tt.before, tt.steps).CombinedOutput()
			if err != nil {
				t.Fatalf("node: %v\n%s", err, out)
			}
			var calls []struct {
				URL  string `json:"url"`
				Body struct {
					AdUnits []unit `json:"adUnits"`
				} `json:"body"`
			}
			if err := json.Unmarshal([]byte(strings.TrimSpace(string(out))), &calls); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			var got [][]unit
			for _, c := range calls {
				if c.URL != "/auction" {
					t.Errorf("requestAds fetched %s", c.URL)
				}
				got = append(got, c.Body.AdUnits)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("%d auction requests, want %d: %s", len(got), len(tt.want), out)
			}
			for i := range got {
				if len(got[i]) == 0 && len(tt.want[i]) == 0 {
					continue
				}
				if !reflect.DeepEqual(got[i], tt.want[i]) {
					t.Errorf("request %d: adUnits %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}
