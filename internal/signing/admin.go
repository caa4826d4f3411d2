package signing

import (
	"encoding/json"
	"errors"
	"net/http"

	"go.uber.org/zap"
)

type rotateRequest struct {
	Kid *string `json:"kid"`
}

// rotateResponse is upstream's RotateKeyResponse, fields in its order
// (endpoints.rs:171-189).
type rotateResponse struct {
	Success     bool            `json:"success"`
	Message     string          `json:"message"`
	NewKid      string          `json:"new_kid"`
	PreviousKid *string         `json:"previous_kid"`
	ActiveKids  []string        `json:"active_kids"`
	JWK         json.RawMessage `json:"jwk"`
	Error       *string         `json:"error,omitempty"`
}

// rotate is POST /_ts/admin/keys/rotate with an optional {"kid"}: a new
// key, made current, its kid given or ts-YYYY-MM-DD (endpoints.rs:296-371).
func (f *Family) rotate(w http.ResponseWriter, r *http.Request) {
	if f.keys == nil {
		// Upstream: no [request_signing] storage ids (endpoints.rs:198-214).
		textError(w, http.StatusInternalServerError, internalError)
		return
	}
	body, ok := readBody(w, r, adminMaxBody)
	if !ok {
		return
	}
	var req rotateRequest
	if len(body) > 0 && json.Unmarshal(body, &req) != nil {
		badJSON(w)
		return
	}
	kid := ""
	if req.Kid != nil {
		kid = *req.Kid
		if msg := validNewKid(kid); msg != "" {
			writeRotate(w, http.StatusBadRequest, rotateFailure(msg))
			return
		}
	}
	rot, err := f.keys.rotate(kid)
	if err != nil {
		status, msg := adminFailure(err)
		f.log.Warn("request signing: key rotation failed", zap.Error(err))
		writeRotate(w, status, rotateFailure(msg))
		return
	}
	f.log.Info("request signing: key rotated", zap.String("kid", rot.NewKid), zap.String("previous_kid", rot.PreviousKid))
	resp := rotateResponse{Success: true, Message: "Key rotated successfully", NewKid: rot.NewKid,
		ActiveKids: rot.ActiveKids, JWK: rot.JWK}
	if rot.PreviousKid != "" {
		resp.PreviousKid = &rot.PreviousKid
	}
	writeRotate(w, http.StatusOK, resp)
}

func rotateFailure(msg string) rotateResponse {
	return rotateResponse{Message: "Key rotation failed", ActiveKids: []string{}, JWK: json.RawMessage("{}"), Error: &msg}
}

func writeRotate(w http.ResponseWriter, status int, resp rotateResponse) {
	out, _ := json.Marshal(resp)
	writeJSON(w, status, out)
}

// adminFailure is the status and error text of a failed admin operation:
// a refusal by upstream's rules, with upstream's text, or a failure of the
// key directory (500, as upstream's store failures).
func adminFailure(err error) (int, string) {
	if errors.Is(err, errRefused) {
		return refusedStatus, refusalText(err)
	}
	if d, ok := errors.AsType[*dirError](err); ok {
		return http.StatusInternalServerError, "Configuration error: " + d.Msg
	}
	return http.StatusInternalServerError, "Configuration error: " + err.Error()
}

type deactivateRequest struct {
	Kid    *string `json:"kid"`
	Delete bool    `json:"delete"`
}

// deactivateResponse is upstream's DeactivateKeyResponse
// (endpoints.rs:383-399).
type deactivateResponse struct {
	Success             bool     `json:"success"`
	Message             string   `json:"message"`
	DeactivatedKid      string   `json:"deactivated_kid"`
	Deleted             bool     `json:"deleted"`
	RemainingActiveKids []string `json:"remaining_active_kids"`
	Error               *string  `json:"error,omitempty"`
}

// deactivate is POST /_ts/admin/keys/deactivate {"kid","delete"?}: the kid
// leaves the JWKS, and with delete its key is removed; never the current
// key, nor the last active one (endpoints.rs:415-498).
func (f *Family) deactivate(w http.ResponseWriter, r *http.Request) {
	if f.keys == nil {
		textError(w, http.StatusInternalServerError, internalError)
		return
	}
	body, ok := readBody(w, r, adminMaxBody)
	if !ok {
		return
	}
	var req deactivateRequest
	if json.Unmarshal(body, &req) != nil || req.Kid == nil {
		badJSON(w)
		return
	}
	kid := *req.Kid
	failed, done := "Key deactivation failed", "Key deactivated successfully"
	if req.Delete {
		failed, done = "Key deletion failed", "Key deleted successfully"
	}
	fail := func(status int, msg string) {
		writeDeactivate(w, status, deactivateResponse{Message: failed, DeactivatedKid: kid,
			RemainingActiveKids: []string{}, Error: &msg})
	}
	// The looser check, so that kids made under older rules can still go
	// (endpoints.rs:434-444).
	if msg := validKidFormat(kid); msg != "" {
		fail(http.StatusBadRequest, msg)
		return
	}
	if err := f.keys.deactivate(kid, req.Delete); err != nil {
		status, msg := adminFailure(err)
		f.log.Warn("request signing: key deactivation failed", zap.String("kid", kid), zap.Error(err))
		fail(status, msg)
		return
	}
	f.log.Info("request signing: key deactivated", zap.String("kid", kid), zap.Bool("deleted", req.Delete))
	writeDeactivate(w, http.StatusOK, deactivateResponse{Success: true, Message: done, DeactivatedKid: kid,
		Deleted: req.Delete, RemainingActiveKids: f.keys.activeKids()})
}

func writeDeactivate(w http.ResponseWriter, status int, resp deactivateResponse) {
	out, _ := json.Marshal(resp)
	writeJSON(w, status, out)
}
