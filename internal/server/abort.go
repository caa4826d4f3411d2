package server

import (
	"net"
	"net/http"
)

// ResetOnAbort makes an aborted response visible as aborted to every
// client. A handler aborts a response it cannot finish by panicking (with
// http.ErrAbortHandler, as httputil.ReverseProxy does when the origin body
// fails). net/http then closes the connection cleanly; for a response
// without framing (HTTP/1.0, or HTTP/1.1 without chunking or a length, RFC
// 9112 §6.3 item 8) that clean close is how a complete body ends, so a
// truncated page would look complete. Here the connection is taken over and
// closed with SO_LINGER 0, which sends a TCP reset instead. HTTP/2 resets
// the stream itself; there, and for non-TCP connections, nothing changes.
func ResetOnAbort(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				reset(w)
				panic(p)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

func reset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	// Down to the socket, under TLS and the framing guard.
	for {
		nc, ok := conn.(interface{ NetConn() net.Conn })
		if !ok {
			break
		}
		conn = nc.NetConn()
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}
