package pageparse

import (
	"testing"
)

// TestParseReadsTheLoaderForm: a page under a Content Security Policy
// carries the ad slots and bids as JSON data blocks read by the loader
// (docs/behaviour.md, "Content Security Policy"); they read as the scripts
// they stand for, nonce attributes and all.
func TestParseReadsTheLoaderForm(t *testing.T) {
	page := `<html><head><script type="application/json" data-tsjs="adSlots">"[{\"id\":\"top\",\"div_id\":\"ad-top\",\"formats\":[[728,90]]}]"</script>` +
		`<script nonce="n">loader()</script><script src="/static/tsjs=tsjs-unified.min.js?v=1" id="trustedserver-js" nonce="n"></script></head>` +
		`<body><script type="application/json" data-tsjs="bids" nonce="n">"{\"top\":{\"adm\":\"\\u003cb\\u003e\",\"w\":728,\"h\":90}}"</script>` +
		`<script nonce="n">loader()</script><script type="application/json" data-tsjs="other">"x"</script></body></html>`
	p, err := Parse([]byte(page))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Slots) != 1 || p.Slots[0].DivID != "ad-top" {
		t.Errorf("slots %+v", p.Slots)
	}
	if b, ok := p.Bids["top"]; !ok || b.Adm != "<b>" || b.W != 728 {
		t.Errorf("bids %+v", p.Bids)
	}
	if p.Bundle != "/static/tsjs=tsjs-unified.min.js?v=1" {
		t.Errorf("bundle %q", p.Bundle)
	}
}
