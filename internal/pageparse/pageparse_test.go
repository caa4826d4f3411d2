package pageparse

import "testing"

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

func TestWithoutBids(t *testing.T) {
	const bids = `<script>(function(){var t=window.tsjs=window.tsjs||{};var b=JSON.parse("{\"top\":{\"hb_adid\":\"a1\"}}");var s=t.scheduleInitialAdInit;if(typeof s==="function")s(b);else t.bids=b;})();</script>`
	const slots = `<script>(window.tsjs=window.tsjs||{}).adSlots=JSON.parse("[]");</script>`
	// Under a Content Security Policy the bids script carries the page's
	// nonce, or its data is a JSON data block before the constant loader
	// (docs/behaviour.md, "Content Security Policy"): the block is cut, the
	// loader, the same on every request, stays.
	const nonced = `<script nonce="n1">(function(){var t=window.tsjs=window.tsjs||{};var b=JSON.parse("{}");t.bids=b;})();</script>`
	const block = `<script type="application/json" data-tsjs="bids" nonce="n1">"{\"top\":{}}"</script>`
	const loader = `<script nonce="n1">loader()</script>`
	for _, tt := range []struct{ name, in, want string }{
		{"bids script cut", "<html><head>" + slots + "</head><body><p>x</p>" + bids + "</body></html>",
			"<html><head>" + slots + "</head><body><p>x</p></body></html>"},
		{"no bids script", "<html><body><script>var a=1</script><p>x</p></body></html>",
			"<html><body><script>var a=1</script><p>x</p></body></html>"},
		{"the prefix outside a script is text", "<body><p>(function(){var t=window.tsjs=window.tsjs||{};var b=JSON.parse(\"\")</p></body>",
			"<body><p>(function(){var t=window.tsjs=window.tsjs||{};var b=JSON.parse(\"\")</p></body>"},
		{"an empty script stays", "<body><script></script>" + bids + "</body>", "<body><script></script></body>"},
		{"unterminated page", "<body>" + bids + "<p>x", "<body><p>x"},
		{"bids script with the page's nonce cut", "<body><p>x</p>" + nonced + "</body>", "<body><p>x</p></body>"},
		{"bids data block cut, loader kept", "<body><p>x</p>" + block + loader + "</body>", "<body><p>x</p>" + loader + "</body>"},
		{"another data block stays", `<body><script type="application/json" data-tsjs="adSlots">"[]"</script></body>`,
			`<body><script type="application/json" data-tsjs="adSlots">"[]"</script></body>`},
	} {
		if got := string(WithoutBids([]byte(tt.in))); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}
