package telemetry

import (
	"io"
	"log"
	"strings"

	"go.uber.org/zap"
)

// ErrorLog is zap.NewStdLog(l) with each line made fit by Text: the
// http.Server ErrorLog that net/http and crypto/tls write their errors
// to. Some quote what a client sent: a TLS handshake error says "client
// requested unsupported application protocols" with every protocol name
// of the ClientHello (crypto/tls handshake_server.go, negotiateALPN), up
// to the 64 KiB of its extension, so each connection could write a line
// of that size.
func ErrorLog(l *zap.Logger) *log.Logger {
	// One more frame than zap's own adapter: the caller stays net/http's.
	return log.New(fitWriter{zap.NewStdLog(l.WithOptions(zap.AddCallerSkip(1))).Writer()}, "", 0)
}

// fitWriter passes each line on made fit by Text.
type fitWriter struct{ w io.Writer }

func (f fitWriter) Write(p []byte) (int, error) {
	if _, err := f.w.Write([]byte(Text(strings.TrimSuffix(string(p), "\n")))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Error is zap.Error(err) made fit by Text: an error can quote what a
// client or a bidder sent at any length (encoding/json quotes a whole
// number), so a log line's error is bounded like every client string.
func Error(err error) zap.Field {
	if err == nil {
		return zap.Skip()
	}
	return zap.String("error", Text(err.Error()))
}
