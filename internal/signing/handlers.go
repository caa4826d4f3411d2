package signing

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"go.uber.org/zap"
)

// Body caps of the verify and admin routes (endpoints.rs:101-102); over
// them upstream answers 413 (http_util.rs:444-458, error.rs:129).
const (
	verifyMaxBody = 4096
	adminMaxBody  = 4096
	maxKidLength  = 128 // endpoints.rs:196
)

// refusedStatus answers a rotation or deactivation that upstream's rules
// refuse (a kid in use, the current or the last active key). Upstream
// answers 500, its error being of the Configuration kind
// (rotation.rs:76-78, 257-260, 311-315; error.rs:120); here the request is
// the cause, and a client's request is never answered 5xx
// (docs/behaviour.md, Fidelity).
const refusedStatus = http.StatusBadRequest

// internalError is upstream's answer to a failure it does not explain
// (error.rs:145-147).
const internalError = "An internal error occurred"

// readBody reads at most max bytes; ok is false when it has answered.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	if err != nil {
		textError(w, http.StatusBadRequest, "Bad request: request body could not be read")
		return nil, false
	}
	if int64(len(body)) > max {
		textError(w, http.StatusRequestEntityTooLarge, internalError)
		return nil, false
	}
	return body, true
}

// badJSON answers a body that is not the route's JSON. Upstream answers
// 500 (its serde error is of the Configuration kind, endpoints.rs:118-121);
// here 400, the request being the cause.
func badJSON(w http.ResponseWriter) {
	textError(w, http.StatusBadRequest, "Bad request: invalid JSON request body")
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// discovery is GET /.well-known/trusted-server.json: {"version":"1.0",
// "jwks":{"keys":[...]}} with the active kids' JWKs, pretty-printed as
// serde_json's to_string_pretty writes it (endpoints.rs:49-74,
// discovery.rs:9-28, jwks.rs:72-87).
func (f *Family) discovery(w http.ResponseWriter, _ *http.Request) {
	var jwks []json.RawMessage
	if f.keys != nil {
		_, jwks = f.keys.activeJWKs()
	}
	if len(jwks) == 0 {
		// Upstream fails to read active-kids from its store.
		f.log.Warn("request signing: no active key to publish")
		textError(w, http.StatusInternalServerError, internalError)
		return
	}
	var b bytes.Buffer
	b.WriteString(`{"version":"1.0","jwks":{"keys":[`)
	for i, j := range jwks {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(j)
	}
	b.WriteString(`]}}`)
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		f.log.Error("request signing: a stored JWK is not JSON", zap.Error(err))
		textError(w, http.StatusInternalServerError, internalError)
		return
	}
	writeJSON(w, http.StatusOK, out.Bytes())
}

type verifyRequest struct {
	Payload   *string `json:"payload"`
	Signature *string `json:"signature"`
	Kid       *string `json:"kid"`
}

type verifyResponse struct {
	Verified bool    `json:"verified"`
	Kid      string  `json:"kid"`
	Message  string  `json:"message"`
	Error    *string `json:"error,omitempty"`
}

// verify is POST /verify-signature (endpoints.rs:104-161): 200 whatever
// the outcome, with verified, and an error that never tells why a
// verification could not run.
func (f *Family) verify(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r, verifyMaxBody)
	if !ok {
		return
	}
	var req verifyRequest
	if json.Unmarshal(body, &req) != nil || req.Payload == nil || req.Signature == nil || req.Kid == nil {
		badJSON(w)
		return
	}
	resp := verifyResponse{Kid: *req.Kid}
	verified, err := f.check(*req.Kid, []byte(*req.Payload), *req.Signature)
	switch {
	case err != nil:
		f.log.Info("request signing: signature verification failed", zap.Error(err))
		resp.Message, resp.Error = "Verification error", ptr("internal verification error")
	case verified:
		resp.Verified, resp.Message = true, "Signature verified successfully"
	default:
		resp.Message, resp.Error = "Signature verification failed", ptr("Invalid signature")
	}
	out, _ := json.Marshal(resp)
	writeJSON(w, http.StatusOK, out)
}

func (f *Family) check(kid string, payload []byte, sig string) (bool, error) {
	if f.keys == nil {
		return false, errors.New("no key directory")
	}
	jwk, err := f.keys.jwkOf(kid)
	if err != nil {
		return false, err
	}
	return verifyWithJWK(jwk, payload, sig)
}

func ptr(s string) *string { return &s }

// validKidFormat is upstream's check on any kid an admin route is given:
// 1-128 characters of ASCII letters, digits, '-', '_', '.', ':'
// (endpoints.rs:216-236).
func validKidFormat(kid string) string {
	if kid == "" || len(kid) > maxKidLength {
		return "Bad request: kid must be 1..=128 characters"
	}
	for _, c := range []byte(kid) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.:", c) >= 0) {
			return "Bad request: kid must contain only ASCII alphanumerics, '-', '_', '.', ':'"
		}
	}
	if !safeFileName(kid) {
		return "Bad request: kid must not be '.' or '..'" // a path in the key directory
	}
	return ""
}

// validNewKid adds what a kid for a new key needs: a lowercase ASCII
// letter first (endpoints.rs:259-269).
func validNewKid(kid string) string {
	if msg := validKidFormat(kid); msg != "" {
		return msg
	}
	if kid[0] < 'a' || kid[0] > 'z' {
		return "Bad request: kid must start with a lowercase ASCII letter"
	}
	return ""
}
