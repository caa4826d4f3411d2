package proxy

import "net/http"

// ssatd never opens a tunnel: a request asking to switch protocols
// (Upgrade, RFC 9110 §7.8: WebSocket, h2c) is sent to the origin as an
// ordinary request, and an origin's 101 Switching Protocols is refused
// (docs/behaviour.md, "Upgrade (WebSocket)").
//
// This is Fastly Compute's rule for the request Trusted Server's guest
// makes: it sends every request with a plain backend fetch
// (crates/trusted-server-adapter-fastly/src/platform.rs, Request::send),
// and on Compute a WebSocket only becomes a tunnel through an explicit
// handoff to a WebSocket-enabled service (handoff_websocket or Fanout:
// https://www.fastly.com/documentation/guides/concepts/real-time-messaging/websockets-tunnel/),
// which upstream never makes (WebSockets are on its docs/roadmap.md).
// Upgrade and Connection are hop-by-hop (RFC 9110 §7.6.1), and a server
// may ignore Upgrade (RFC 9110 §7.8); the client then gets the origin's
// ordinary answer (a WebSocket client sees its handshake fail, curl's h2c
// offer gets HTTP/1.1). A tunnel would hold a request place for as long as
// the client kept it open, with bytes no request limit reads.

// ignoreUpgrade removes the client's offer to switch protocols before
// ReverseProxy sees it: ReverseProxy would put Upgrade back on the origin
// request after removing the hop-by-hop headers, and answer 502 to an
// Upgrade value it cannot print (client input never causes a 5xx). The
// Connection header goes with the other hop-by-hop headers.
func ignoreUpgrade(r *http.Request) {
	r.Header.Del("Upgrade")
}

// refuseSwitch refuses, with 502, a 101 Switching Protocols: the origin
// request never asks for one (ignoreUpgrade), so an origin that sends it
// anyway would get a tunnel past every request limit. ReverseProxy closes
// the origin connection with the body.
func refuseSwitch(resp *http.Response) error {
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return nil
	}
	return &guestError{status: http.StatusBadGateway, reason: reasonSwitchingProtocols,
		msg: "the origin switched protocols; ssatd does not tunnel (WebSocket and other upgrades are not proxied)"}
}
