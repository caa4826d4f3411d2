package compress

import (
	"net/http"
	"strings"
)

// AddVary adds token to Vary unless it is already listed or Vary is "*"
// (RFC 9110 §12.5.5). The guest and the edge both use it when a response
// starts to depend on Accept-Encoding.
func AddVary(h http.Header, token string) {
	for _, v := range h.Values("Vary") {
		for _, f := range strings.Split(v, ",") {
			f = strings.TrimSpace(f)
			if f == "*" || strings.EqualFold(f, token) {
				return
			}
		}
	}
	h.Add("Vary", token)
}

// VaryCount counts the Vary elements equal to token, across all lines.
func VaryCount(h http.Header, token string) int {
	n := 0
	for _, v := range h.Values("Vary") {
		for _, f := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), token) {
				n++
			}
		}
	}
	return n
}
