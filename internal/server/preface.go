package server

import (
	"io"
	"net/http"
)

// RefuseH2Preface answers the HTTP/2 connection preface ("PRI *
// HTTP/2.0") with 505 and closes the connection. ssatd speaks HTTP/1.1 on
// its listener and does not do HTTP/2 with prior knowledge (RFC 9113
// §3.3). Go's HTTP/1 server passes the preface to the handler so that a
// handler can take over for h2c; forwarded as-is it would reach the
// origin as "PRI /%2A". The preface is built to be invalid HTTP/1.1 (RFC 9113 §3.4),
// so 505 HTTP Version Not Supported (RFC 9110 §15.6.6) is the answer Go's
// server gives to every other major version 2 request line. The
// connection is closed because the rest of the preface ("SM\r\n\r\n") is
// still on it and is not a request (RFC 9112 §9.6).
//
// Any other request in asterisk-form ("GET * HTTP/1.1") is answered 400:
// that form is defined for OPTIONS only (RFC 9112 §3.2.4), which Go's
// server answers itself, and it has no path to forward.
func RefuseH2Preface(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == "PRI" && r.ProtoMajor == 2:
			refuse(w, http.StatusHTTPVersionNotSupported, "HTTP/2 with prior knowledge is not supported; use HTTP/1.1\n")
		case r.RequestURI == "*":
			refuse(w, http.StatusBadRequest, "the asterisk-form request target is only for OPTIONS\n")
		default:
			h.ServeHTTP(w, r)
		}
	})
}

func refuse(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Connection", "close")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg)
}
