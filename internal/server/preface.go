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
// "OPTIONS *" asks about the server itself (RFC 9110 §9.3.7) and is
// answered here as Go's server answers it, 200 with no body; Go's own
// handler for it is turned off (see New), since it answers without the
// handler and refuseFaultyFraming counts every request of a connection.
// Any other request in asterisk-form ("GET * HTTP/1.1") is answered 400:
// that form is defined for OPTIONS only (RFC 9112 §3.2.4), and it has no
// path to forward.
func RefuseH2Preface(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == "PRI" && r.ProtoMajor == 2:
			refuse(w, http.StatusHTTPVersionNotSupported, "HTTP/2 with prior knowledge is not supported; use HTTP/1.1\n")
		case r.RequestURI == "*" && r.Method == http.MethodOptions:
			serverOptions(w, r)
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

// serverOptions is net/http's answer to "OPTIONS *": an empty 200, after
// reading at most 4 KiB of a body (a longer one ends the connection).
func serverOptions(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Length", "0")
	if r.ContentLength != 0 {
		_, _ = io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, 4<<10))
	}
}
