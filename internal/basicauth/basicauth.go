// Package basicauth is Trusted Server's [[handlers]]: HTTP Basic
// authentication asked of every request whose path a handler's regular
// expression matches, checked before routing, so that it covers the
// origin's pages as much as /_ts/admin/* (IABTechLab/trusted-server
// crates/trusted-server-core/src/auth.rs, enforce_basic_auth, run by the
// Fastly adapter's AuthMiddleware ahead of its router,
// crates/trusted-server-adapter-fastly/src/middleware.rs:120-137;
// docs/behaviour.md, "Basic authentication"); and the admin namespaces
// that must never reach the origin (Reserved).
package basicauth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/ssatd/ssatd/internal/config"
)

// Realm is upstream's challenge (auth.rs:12).
const Realm = `Basic realm="Trusted Server"`

// Verdict is what Check decides of a request.
type Verdict uint8

const (
	// Pass: no handler matches the path, or the credentials are right.
	Pass Verdict = iota
	// Challenge: a handler matches and the credentials are missing or
	// wrong; answered 401 with the challenge (auth.rs:44-66, 96-103).
	Challenge
	// Closed: the path is in the admin namespace and no handler matches
	// it. Upstream fails closed with a configuration error, a 500
	// (auth.rs:36-41); ssatd answers 404, since the client's path is not
	// a failure of the deployment, and the request never reaches the
	// origin with what may be admin credentials.
	Closed
)

type handler struct {
	re         *regexp.Regexp
	user, pass [sha256.Size]byte
}

// Gate holds the configured handlers, in their order: the first whose
// expression matches the path decides (settings.rs:2887-2898).
type Gate struct{ hs []handler }

// New compiles the handlers; config.Validate has checked them, so an error
// here is a configuration that was not validated.
func New(hs []config.HandlerConfig) (*Gate, error) {
	g := &Gate{}
	for i, h := range hs {
		re, err := regexp.Compile(h.Path)
		if err != nil {
			return nil, fmt.Errorf("handlers[%d].path: %w", i, err)
		}
		g.hs = append(g.hs, handler{re: re,
			user: sha256.Sum256([]byte(h.Username.Expose())), pass: sha256.Sum256([]byte(h.Password.Expose()))})
	}
	return g, nil
}

// Check decides r on its raw path, as upstream matches req.uri().path()
// undecoded (auth.rs:35): "/_ts/admin%2Fec" is matched by "^/_ts/admin".
func (g *Gate) Check(r *http.Request) Verdict {
	return g.check(r.URL.EscapedPath(), r.Header.Get("Authorization"))
}

// CheckPath decides r as if its path were path: the admin routes check
// the decoded path too (signing.Deps.AdminAuth), so that a request whose
// raw path no handler matches, such as "/_ts/%61dmin/keys/rotate", is not
// let in because the router decoded it.
func (g *Gate) CheckPath(r *http.Request, path string) Verdict {
	return g.check(path, r.Header.Get("Authorization"))
}

func (g *Gate) check(path, authorization string) Verdict {
	var h *handler
	for i := range g.hs {
		if g.hs[i].re.MatchString(path) {
			h = &g.hs[i]
			break
		}
	}
	if h == nil {
		// settings.rs:2903-2905, is_admin_path.
		if path == "/_ts/admin" || strings.HasPrefix(path, "/_ts/admin/") {
			return Closed
		}
		return Pass
	}
	user, pass, ok := credentials(authorization)
	if !ok {
		return Challenge
	}
	// Digests first, so that the comparison takes the same time whatever
	// the lengths, and both are compared whatever the first gives
	// (auth.rs:47-59).
	u := sha256.Sum256([]byte(user))
	p := sha256.Sum256([]byte(pass))
	if subtle.ConstantTimeCompare(u[:], h.user[:])&subtle.ConstantTimeCompare(p[:], h.pass[:]) == 1 {
		return Pass
	}
	return Challenge
}

// credentials reads an Authorization header as upstream does
// (auth.rs:68-94): the scheme "basic" in any case, a standard base64
// token, UTF-8, split at the first colon.
func credentials(v string) (user, pass string, ok bool) {
	scheme, token, found := strings.Cut(v, " ")
	if !found || !strings.EqualFold(strings.TrimSpace(scheme), "basic") {
		return "", "", false
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return "", "", false
	}
	b, err := base64.StdEncoding.DecodeString(token)
	if err != nil || !utf8.Valid(b) {
		return "", "", false
	}
	return strings.Cut(string(b), ":")
}

// Write answers v: upstream's 401 (auth.rs:96-103), or the 404 of Closed
// in upstream's plain-text form (app.rs:974-1003).
func Write(w http.ResponseWriter, v Verdict) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	switch v {
	case Challenge:
		h.Set("WWW-Authenticate", Realm)
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, "Unauthorized")
	case Closed:
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, "Not found\n")
	}
}

// Status is the status Write sends for v.
func (v Verdict) Status() int {
	switch v {
	case Challenge:
		return http.StatusUnauthorized
	case Closed:
		return http.StatusNotFound
	}
	return http.StatusOK
}
