// Package ssatdtest runs ssatd inside a Go test, as net/http/httptest runs
// an HTTP server: the real daemon (the same guest, edge and auction as
// `ssatd serve`) on loopback ports, a scriptable fake Prebid Server, and a
// parser for what ssatd injected into a page, so that a test asserts on
// data rather than on HTML strings.
//
// A typical test starts its own origin (httptest.NewServer), a Bidder, and
// then ssatd with a configuration naming both:
//
//	origin := httptest.NewServer(myPages)
//	bidder := ssatdtest.NewBidder(t, ssatdtest.Answer{Offers: []ssatdtest.Offer{
//		{Slot: "atf", Seat: "alpha", Price: "2.50"},
//	}})
//	srv := ssatdtest.Start(t, `
//	[publisher]
//	domain = "127.0.0.1"
//	origin_url = "`+origin.URL+`"
//	...
//	[[auction.openrtb]]
//	name = "pbs"
//	url = "`+bidder.URL+`"
//	`)
//	resp, body, err := srv.Navigate("/article") // a browser's navigation
//	page, _ := ssatdtest.ParsePage(body)
//	// page.Slots, page.Bids["atf"], bidder.Requests()[0].Imp ...
//
// Server.Client is a client for the daemon (it trusts the daemon's
// certificate when server.tls_cert_file and server.tls_key_file are set),
// and NavigationRequest builds the request a browser sends, for tests that
// add headers of their own.
//
// The configuration may also be a Trusted Server settings file
// (trusted-server.toml), read as `ssatd serve` reads it
// (docs/trusted-server.md).
//
// Everything started is stopped by t.Cleanup, and Start fails the test if
// a goroutine of that daemon is still running once it has stopped. Only
// the daemon's own goroutines are looked at, so tests that each start a
// daemon may run in parallel (t.Parallel). The configuration keys are in
// README.md ("Configuration") and configs/example.toml; docs/testing.md
// has the whole walk-through.
package ssatdtest
