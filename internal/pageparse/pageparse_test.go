package pageparse

import "testing"

func TestWithoutBids(t *testing.T) {
	const bids = `<script>(function(){var t=window.tsjs=window.tsjs||{};var b=JSON.parse("{\"top\":{\"hb_adid\":\"a1\"}}");var s=t.scheduleInitialAdInit;if(typeof s==="function")s(b);else t.bids=b;})();</script>`
	const slots = `<script>(window.tsjs=window.tsjs||{}).adSlots=JSON.parse("[]");</script>`
	for _, tt := range []struct{ name, in, want string }{
		{"bids script cut", "<html><head>" + slots + "</head><body><p>x</p>" + bids + "</body></html>",
			"<html><head>" + slots + "</head><body><p>x</p></body></html>"},
		{"no bids script", "<html><body><script>var a=1</script><p>x</p></body></html>",
			"<html><body><script>var a=1</script><p>x</p></body></html>"},
		{"the prefix outside a script is text", "<body><p>(function(){var t=window.tsjs=window.tsjs||{};var b=JSON.parse(\"\")</p></body>",
			"<body><p>(function(){var t=window.tsjs=window.tsjs||{};var b=JSON.parse(\"\")</p></body>"},
		{"an empty script stays", "<body><script></script>" + bids + "</body>", "<body><script></script></body>"},
		{"unterminated page", "<body>" + bids + "<p>x", "<body><p>x"},
	} {
		if got := string(WithoutBids([]byte(tt.in))); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}
