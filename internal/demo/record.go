package demo

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// RequestsPath serves the bid requests the demo bidder received: GET lists
// them as a JSON array, oldest first, DELETE forgets them
// (docs/testing.md, "From a shell").
const RequestsPath = "/__requests"

// MaxRecorded bounds the record: past it the oldest request is dropped.
const MaxRecorded = 100

// record keeps a bid request's body as it was sent, compacted, so that the
// record shows fields the demo bidder itself does not read.
func (b *Bidder) record(body []byte) {
	var c bytes.Buffer
	if json.Compact(&c, body) != nil {
		return // not JSON: refused before it is answered, nothing to show
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.recorded) == MaxRecorded {
		copy(b.recorded, b.recorded[1:])
		b.recorded = b.recorded[:MaxRecorded-1]
	}
	b.recorded = append(b.recorded, json.RawMessage(c.Bytes()))
}

func (b *Bidder) serveRequests(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		b.mu.Lock()
		list := append([]json.RawMessage{}, b.recorded...)
		b.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(list)
	case http.MethodDelete:
		b.mu.Lock()
		b.recorded = nil
		b.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "GET, HEAD, DELETE")
		http.Error(w, "GET or DELETE "+RequestsPath, http.StatusMethodNotAllowed)
	}
}
