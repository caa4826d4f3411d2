package identity

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// Identify serves GET and OPTIONS /_ts/api/v1/identify (ec/identify.rs:
// 36-180): a partner, by its bearer token, reads its own uid for the
// reader's edge cookie. It never mints one.
func (f *Family) Identify() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		noStore(w.Header())
		origin, allowed := f.classifyOrigin(r)
		if !allowed {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		if origin != "" {
			cors(w.Header(), origin)
		}
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusOK)
			return
		}
		f.identify(w, r)
	})
}

type identifyResponse struct {
	EC           string `json:"ec"`
	Consent      string `json:"consent"`
	Degraded     bool   `json:"degraded"`
	SourceDomain string `json:"source_domain"`
	UID          string `json:"uid,omitempty"`
	EID          *eid   `json:"eid,omitempty"`
}

type eid struct {
	Source string `json:"source"`
	UIDs   []uid  `json:"uids"`
}

type uid struct {
	ID    string `json:"id"`
	Atype int    `json:"atype"`
}

func (f *Family) identify(w http.ResponseWriter, r *http.Request) {
	p := f.authenticate(r)
	if p == nil {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_token"})
		return
	}
	if !f.seam.Consent(r).EC.Allowed {
		writeJSON(w, http.StatusForbidden, map[string]string{"consent": "denied"})
		return
	}
	id := cookieID(cookieValues(r))
	if !Valid(id) {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	resp := identifyResponse{EC: id, Consent: "ok", SourceDomain: p.SourceDomain}
	if f.graph == nil {
		resp.Degraded = true
	} else {
		ctx, cancel := context.WithTimeout(r.Context(), storeTimeout)
		e, _, ok, err := f.graph.get(ctx, id)
		cancel()
		switch {
		case err != nil:
			f.failed(err, "identify: store read failed", id)
			resp.Degraded = true
		case ok && e.Consent.OK && e.IDs[p.SourceDomain].UID != "":
			resp.UID = e.IDs[p.SourceDomain].UID
			resp.EID = &eid{Source: p.SourceDomain, UIDs: []uid{{ID: resp.UID, Atype: p.OpenRTBAtype}}}
		}
	}
	writeJSON(w, http.StatusOK, resp)
}

// authenticate finds the partner whose token the Authorization header
// carries: "Bearer" in any case, one token, nothing after (ec/auth.rs).
func (f *Family) authenticate(r *http.Request) *partner {
	fields := strings.Fields(r.Header.Get("Authorization"))
	if len(fields) != 2 || !strings.EqualFold(fields[0], "bearer") {
		return nil
	}
	return f.partners[tokenHash(fields[1])]
}

// classifyOrigin is identify.rs:226-279: no Origin is allowed without
// CORS headers; an Origin must be https on publisher.domain or a subdomain,
// its host written in lower case.
func (f *Family) classifyOrigin(r *http.Request) (origin string, allowed bool) {
	origin = r.Header.Get("Origin")
	if _, sent := r.Header["Origin"]; !sent {
		return "", true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" {
		return "", false
	}
	host := u.Hostname()
	if strings.ToLower(host) != host {
		return "", false
	}
	pub := strings.ToLower(strings.TrimSuffix(f.domain, "."))
	if host == pub || strings.HasSuffix(host, "."+pub) {
		return origin, true
	}
	return "", false
}

// noStore is identify's cache headers (identify.rs:281-293).
func noStore(h http.Header) {
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	h.Set("Vary", "Origin, Authorization")
}

func cors(h http.Header, origin string) {
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Allow-Credentials", "true")
	h.Set("Access-Control-Allow-Methods", "GET, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Authorization")
	h.Set("Access-Control-Max-Age", "600")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v) // the values here always encode
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
