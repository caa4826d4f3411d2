package signing

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
)

// The key directory stands in for Trusted Server's two Fastly stores
// (IABTechLab/trusted-server crates/trusted-server-core/src/
// request_signing/mod.rs:36-46): its config store "jwks_store", whose
// entries current-kid, active-kids and one public JWK per kid become files,
// and its secret store "signing_keys", one private key per kid:
//
//	DIR/current-kid     the kid that signs, as text
//	DIR/active-kids     the kids published in the JWKS, comma-separated
//	DIR/jwk/<kid>       the public JWK, as upstream stores it
//	DIR/secret/<kid>    the 32-byte Ed25519 seed, standard base64 (mode 0600)
//
// Each file holds what upstream's store entry of the same name holds
// (rotation.rs:163-228), so entries can be copied from a Fastly service.
// Files are replaced by renaming, so a reader never sees half of one.
const (
	currentKidFile = "current-kid"
	activeKidsFile = "active-kids"
	jwkDir         = "jwk"
	secretDir      = "secret"
)

// errRefused marks a rotation or deactivation refused by upstream's rules
// (a kid in use, the current or the last active key), as opposed to a
// failure of the directory itself.
var errRefused = errors.New("refused")

// configError formats as upstream's TrustedServerError::Configuration
// (error.rs:26), whose Display the admin routes put in their "error" field
// (endpoints.rs:350-360).
func configError(format string, a ...any) error {
	return fmt.Errorf("%w: Configuration error: "+format, append([]any{errRefused}, a...)...)
}

// refusalText is the error's text without the errRefused marker.
func refusalText(err error) string {
	return strings.TrimPrefix(err.Error(), errRefused.Error()+": ")
}

// dirError is a failure of the key directory: Msg is upstream's text for
// the step that failed (rotation.rs:163-228, 283-295), which the admin
// routes answer; the cause is logged.
type dirError struct {
	Msg string
	err error
}

func (e *dirError) Error() string { return e.Msg + ": " + e.err.Error() }
func (e *dirError) Unwrap() error { return e.err }

func storeFailure(err error, format string, a ...any) error {
	return &dirError{Msg: fmt.Sprintf(format, a...), err: err}
}

// reloadInterval is how often the key directory is checked for a change
// made by another process (another instance sharing it, or an operator
// copying entries in): a rotation on one instance reaches the others'
// signatures and discovery documents within it.
const reloadInterval = time.Second

// keyStore is the key directory, with what it held at the last load.
type keyStore struct {
	dir  string
	rand io.Reader
	now  func() time.Time
	log  *zap.Logger

	mu      sync.Mutex // serialises changes; guards the fields below
	current string
	active  []string
	keys    map[string]ed25519.PrivateKey // kid -> key, for current only
	jwks    map[string]json.RawMessage    // kid -> stored JWK, for active kids
	checked time.Time                     // the last look for a change
	seen    [2]fileStamp                  // current-kid and active-kids at the last load
}

// fileStamp tells a changed file: its modification time and size.
type fileStamp struct {
	mod  time.Time
	size int64
}

func openKeyStore(dir string, random io.Reader, now func() time.Time, log *zap.Logger) (*keyStore, error) {
	s := &keyStore{dir: dir, rand: random, now: now, log: log}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.load(); err != nil {
		return nil, err
	}
	s.checked = now()
	return s, nil
}

func (s *keyStore) stamps() [2]fileStamp {
	var out [2]fileStamp
	for i, name := range []string{currentKidFile, activeKidsFile} {
		if fi, err := os.Stat(filepath.Join(s.dir, name)); err == nil {
			out[i] = fileStamp{fi.ModTime(), fi.Size()}
		}
	}
	return out
}

// refresh reloads the directory when current-kid or active-kids changed
// since the last load: at most once per reloadInterval, or at once when
// force (before a change, so that it starts from what the directory
// holds). A directory that no longer loads keeps the last good state,
// and says so. Called with mu held.
func (s *keyStore) refresh(force bool) {
	now := s.now()
	if !force && now.Sub(s.checked) < reloadInterval {
		return
	}
	s.checked = now
	if s.stamps() == s.seen {
		return
	}
	current, active, keys, jwks := s.current, s.active, s.keys, s.jwks
	err := s.load()
	if err == nil && s.current == "" && current != "" {
		err = errors.New("it has no current key any more")
	}
	if err != nil {
		// A directory emptied or half-copied must not stop the signing
		// (bidders would drop unsigned requests): the last good keys stay,
		// until the directory changes again.
		s.current, s.active, s.keys, s.jwks, s.seen = current, active, keys, jwks, s.stamps()
		s.log.Error("request signing: the key directory changed and does not load; keeping the keys loaded before", zap.Error(err))
	}
}

// load reads the directory; a directory that does not exist yet is an
// empty store, as upstream's stores are before the first rotation.
// Called with mu held.
func (s *keyStore) load() error {
	seen := s.stamps()
	current, err := s.readEntry(currentKidFile)
	if err != nil {
		return err
	}
	activeText, err := s.readEntry(activeKidsFile)
	if err != nil {
		return err
	}
	active := parseActiveKids(activeText)
	jwks := make(map[string]json.RawMessage, len(active))
	for _, kid := range active {
		j, err := s.readJWK(kid)
		if err != nil {
			return err
		}
		jwks[kid] = j
	}
	keys := map[string]ed25519.PrivateKey{}
	if current != "" {
		k, err := s.readSecret(current)
		if err != nil {
			return err
		}
		keys[current] = k
	}
	s.current, s.active, s.jwks, s.keys, s.seen = current, active, jwks, keys, seen
	return nil
}

// parseActiveKids splits active-kids as upstream does: comma-separated,
// trimmed, empty entries skipped (mod.rs:56-62).
func parseActiveKids(text string) []string {
	var out []string
	for kid := range strings.SplitSeq(text, ",") {
		if kid = strings.TrimSpace(kid); kid != "" {
			out = append(out, kid)
		}
	}
	return out
}

// readEntry is a config entry's text, "" when it does not exist.
func (s *keyStore) readEntry(name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read key directory: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func (s *keyStore) readJWK(kid string) (json.RawMessage, error) {
	b, err := os.ReadFile(s.path(jwkDir, kid))
	if err != nil {
		return nil, fmt.Errorf("read the JWK of active kid %q: %w", kid, err)
	}
	if !json.Valid(b) {
		return nil, fmt.Errorf("the JWK of kid %q in %s is not JSON", kid, s.dir)
	}
	return json.RawMessage(strings.TrimSpace(string(b))), nil
}

// readSecret parses a private key as upstream does: standard base64 of the
// 32-byte seed, anything else being corrupt key material (signing.rs:31-53).
func (s *keyStore) readSecret(kid string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(s.path(secretDir, kid))
	if err != nil {
		return nil, fmt.Errorf("read the signing key of kid %q: %w", kid, err)
	}
	seed, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("signing key %q is not valid base64: corrupt key material", kid)
	}
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("signing key %q must be 32 bytes after base64 decoding", kid)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

func (s *keyStore) path(sub, kid string) string { return filepath.Join(s.dir, sub, kid) }

// writeFile replaces name atomically: a temporary file renamed over it.
func writeFile(name string, data []byte, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(name), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after a successful rename, a no-op
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), name)
}

func removeFile(name string) error {
	if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err // a missing file is already deleted (rotation.rs:279-282)
	}
	return nil
}

// signer is the current key, or nil before the first key.
func (s *keyStore) signer() (kid string, key ed25519.PrivateKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh(false)
	return s.current, s.keys[s.current]
}

// activeJWKs are the active kids and their stored JWKs.
func (s *keyStore) activeJWKs() (kids []string, jwks []json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh(false)
	for _, kid := range s.active {
		kids = append(kids, kid)
		jwks = append(jwks, s.jwks[kid])
	}
	return kids, jwks
}

// jwkOf reads the JWK of any kid the directory holds, active or not, as
// upstream's verification looks the kid up in the config store
// (signing.rs:192-203).
func (s *keyStore) jwkOf(kid string) (json.RawMessage, error) {
	if !safeFileName(kid) {
		return nil, fmt.Errorf("no JWK for kid %q", kid)
	}
	s.mu.Lock()
	s.refresh(false)
	j, ok := s.jwks[kid]
	s.mu.Unlock()
	if ok {
		return j, nil
	}
	return s.readJWK(kid)
}

// safeFileName: kid is usable as a file name in the directory. Upstream's
// kid charset (endpoints.rs:219-236) allows "." and "..", which would name
// directories here.
func safeFileName(kid string) bool {
	return kid != "" && kid != "." && kid != ".." && !strings.ContainsAny(kid, `/\`)
}

// rotation is the outcome of rotate (rotation.rs:19-30).
type rotation struct {
	NewKid      string
	PreviousKid string // "" when there was none
	ActiveKids  []string
	JWK         json.RawMessage
}

// rotate makes a new key the current one, as upstream's rotate_key does
// (rotation.rs:63-143): the private key, then the JWK, then active-kids,
// and current-kid last, each step undone when a later one fails.
func (s *keyStore) rotate(kid string) (rotation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh(true)
	previous := s.current
	active := slices.Clone(s.active)
	if kid == "" {
		kid = s.uniqueDateKid(active)
	} else if s.keyExists(kid, active) {
		return rotation{}, configError("kid '%s' already exists; choose a unique kid", kid)
	}
	pub, priv, err := ed25519.GenerateKey(s.rand)
	if err != nil {
		return rotation{}, storeFailure(err, "failed to generate key")
	}
	jwk := publicJWK(kid, pub)
	seed := base64.StdEncoding.EncodeToString(priv.Seed())
	if err := writeFile(s.path(secretDir, kid), []byte(seed), 0o600); err != nil {
		return rotation{}, storeFailure(err, "failed to store private key '%s'", kid)
	}
	if err := writeFile(s.path(jwkDir, kid), jwk, 0o644); err != nil {
		_ = removeFile(s.path(secretDir, kid))
		return rotation{}, storeFailure(err, "failed to store public JWK '%s'", kid)
	}
	if !slices.Contains(active, kid) {
		active = append(active, kid)
	}
	if err := writeFile(filepath.Join(s.dir, activeKidsFile), []byte(strings.Join(active, ",")), 0o644); err != nil {
		_ = removeFile(s.path(jwkDir, kid))
		_ = removeFile(s.path(secretDir, kid))
		return rotation{}, storeFailure(err, "failed to update active-kids")
	}
	s.active = active
	s.jwks[kid] = jwk
	if err := writeFile(filepath.Join(s.dir, currentKidFile), []byte(kid), 0o644); err != nil {
		// As upstream: the new kid is published but unused, the old one
		// still signs; a later rotation recovers.
		return rotation{}, storeFailure(err, "failed to update current-kid")
	}
	s.current = kid
	s.keys = map[string]ed25519.PrivateKey{kid: priv}
	s.seen = s.stamps()
	return rotation{NewKid: kid, PreviousKid: previous, ActiveKids: slices.Clone(active), JWK: jwk}, nil
}

// keyExists: kid is active or has a JWK (rotation.rs:145-148).
func (s *keyStore) keyExists(kid string, active []string) bool {
	if slices.Contains(active, kid) {
		return true
	}
	_, err := os.Stat(s.path(jwkDir, kid))
	return err == nil
}

// uniqueDateKid is ts-YYYY-MM-DD (UTC), with "-" and 32 random hex digits
// (a simple-form UUID v4) when that kid exists (rotation.rs:150-161,
// 322-326).
func (s *keyStore) uniqueDateKid(active []string) string {
	kid := "ts-" + s.now().UTC().Format("2006-01-02")
	if !s.keyExists(kid, active) {
		return kid
	}
	var u [16]byte
	_, _ = io.ReadFull(rand.Reader, u[:])
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return kid + "-" + hex.EncodeToString(u[:])
}

// deactivate removes kid from the active kids, refusing the current key
// and the last active one (rotation.rs:247-264); with del it also deletes
// the key, private key first (rotation.rs:271-298).
func (s *keyStore) deactivate(kid string, del bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh(true)
	op := "deactivate"
	if del {
		op = "delete"
	}
	if kid == s.current {
		return configError("cannot %s '%s' because it is the current signing key; rotate first", op, kid)
	}
	active := slices.DeleteFunc(slices.Clone(s.active), func(k string) bool { return k == kid })
	if len(active) == 0 {
		return configError("cannot deactivate the last active key")
	}
	if err := writeFile(filepath.Join(s.dir, activeKidsFile), []byte(strings.Join(active, ",")), 0o644); err != nil {
		return storeFailure(err, "failed to update active-kids")
	}
	s.active = active
	s.seen = s.stamps()
	delete(s.jwks, kid)
	if !del {
		return nil
	}
	if err := removeFile(s.path(secretDir, kid)); err != nil {
		return storeFailure(err, "failed to delete signing key from secret store")
	}
	if err := removeFile(s.path(jwkDir, kid)); err != nil {
		return storeFailure(err, "failed to delete JWK from config store")
	}
	return nil
}

// activeKids is the active kids now.
func (s *keyStore) activeKids() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.active)
}

// Init makes sure dir holds a signing key, creating the first one, with a
// date kid, when it has none; created says whether it did. It is what
// `ssatd keys init` runs, and equals a first rotation on upstream's empty
// stores (rotation.rs:63-143).
func Init(dir string, now func() time.Time) (kid string, created bool, err error) {
	s, err := openKeyStore(dir, rand.Reader, now, zap.NewNop())
	if err != nil {
		return "", false, err
	}
	if kid, key := s.signer(); key != nil {
		return kid, false, nil
	}
	rot, err := s.rotate("")
	if err != nil {
		return "", false, err
	}
	return rot.NewKid, true, nil
}
