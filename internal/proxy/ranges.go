package proxy

import (
	"io"
	"net/http"
)

// wholeRepresentation makes sure that the rewrite never sees a part of a
// page. A 206 for HTML to a ranged GET is fetched again without Range and
// If-Range, and the whole page is rewritten and answered 200: a transforming
// proxy may ignore Range (RFC 9110 §14.2), and a part of the origin's bytes
// would not line up with the rewritten representation the client was given
// (docs/decisions.md, "Range on the rewrite route"). A 206 the request did
// not ask for, or that comes again, is refused with 502.
func (g *Guest) wholeRepresentation(resp *http.Response, x *exchange) error {
	if resp.StatusCode != http.StatusPartialContent || !isHTML(resp.Header.Get("Content-Type")) {
		return nil
	}
	req := resp.Request
	if req.Method == http.MethodGet && req.Header.Get("Range") != "" && (req.Body == nil || req.Body == http.NoBody) {
		again := req.Clone(req.Context())
		again.Header.Del("Range")
		again.Header.Del("If-Range")
		whole, err := g.rp.Transport.RoundTrip(again)
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10)) // lets a short part reuse the connection
		resp.Body.Close()
		if err != nil {
			x.status = 0 // the failure is the origin request's (failureOf)
			return err
		}
		*resp = *whole
		x.status = resp.StatusCode
		if resp.StatusCode != http.StatusPartialContent {
			return nil
		}
	}
	resp.Body.Close()
	return &guestError{status: http.StatusBadGateway, reason: reasonPartialContent,
		msg: "the origin answered with a part of the page, which cannot be rewritten"}
}
