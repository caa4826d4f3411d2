package proxy

import (
	"io"
	"net/http"
)

// wholePages is the origin transport ReverseProxy uses: it makes sure that
// the rewrite never sees a part of a page. A 206 for HTML to a ranged GET
// is fetched again without Range and If-Range, and the whole page is
// rewritten and answered 200: a transforming proxy may ignore Range (RFC
// 9110 §14.2), and a part of the origin's bytes would not line up with the
// rewritten representation the client was given (docs/decisions.md,
// "Range on the rewrite route").
//
// The second fetch happens inside RoundTrip so that ReverseProxy treats
// the response that is served like any other: it removes the hop-by-hop
// headers, Connection and the fields it lists, Keep-Alive and the rest of
// RFC 9110 §7.6.1, after RoundTrip returns and before modifyResponse.
// Replacing the response later would let the fresh response's hop-by-hop
// headers reach the client.
type wholePages struct{ rt http.RoundTripper }

func (t wholePages) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || classify(req.Method, resp, nil).why != whyPartialPage || req.Header.Get("Range") == "" ||
		(req.Body != nil && req.Body != http.NoBody) {
		return resp, err
	}
	again := req.Clone(req.Context())
	again.Header.Del("Range")
	again.Header.Del("If-Range")
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10)) // lets a short part reuse the connection
	resp.Body.Close()
	return t.rt.RoundTrip(again)
}

// CloseIdleConnections closes the idle connections of the transport
// beneath (Guest.Close).
func (t wholePages) CloseIdleConnections() {
	if c, ok := t.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// refusal is the error the guest answers a classified response with, nil
// when it is served: a 206 for HTML that reached modifyResponse (one the
// request did not ask for, or one that came again when wholePages asked
// for the whole page) is refused with 502. ReverseProxy closes the body.
func (c classification) refusal() error {
	if c.why != whyPartialPage {
		return nil
	}
	return &guestError{status: http.StatusBadGateway, reason: reasonPartialContent,
		msg: "the origin answered with a part of the page, which cannot be rewritten"}
}
