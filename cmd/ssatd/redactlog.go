package main

import (
	"fmt"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/ssatd/ssatd/internal/config"
)

// redactLogs masks the secret parts of configured URLs (credentials, query
// values) in every line log writes, whichever package writes it: the
// message and every string, error, stringer and byte-string field. URLs
// reach log lines inside errors that ssatd does not build itself, such as
// the HTTP client's "Post \"https://pbs.example/auction?key=...\": ...".
func redactLogs(log *zap.Logger, cfg *config.Config) *zap.Logger {
	r := cfg.LogReplacer()
	if r == nil {
		return log
	}
	if _, done := log.Core().(redactCore); done {
		return log
	}
	return log.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core { return redactCore{Core: c, r: r} }))
}

type redactCore struct {
	zapcore.Core
	r *strings.Replacer
}

func (c redactCore) With(fs []zapcore.Field) zapcore.Core {
	return redactCore{Core: c.Core.With(c.fields(fs)), r: c.r}
}

func (c redactCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

// Write hands the masked entry to the wrapped core through its own Check,
// not its Write: a core that only observes (zap.Hooks) writes nothing
// itself and adds the cores that do in Check.
func (c redactCore) Write(e zapcore.Entry, fs []zapcore.Field) error {
	e.Message = c.r.Replace(e.Message)
	if ce := c.Core.Check(e, nil); ce != nil {
		ce.Write(c.fields(fs)...)
	}
	return nil
}

func (c redactCore) fields(fs []zapcore.Field) []zapcore.Field {
	out := make([]zapcore.Field, len(fs))
	for i, f := range fs {
		switch f.Type {
		case zapcore.StringType:
			f.String = c.r.Replace(f.String)
		case zapcore.ByteStringType:
			if b, ok := f.Interface.([]byte); ok {
				f.Interface = []byte(c.r.Replace(string(b)))
			}
		case zapcore.ErrorType:
			if err, ok := f.Interface.(error); ok && err != nil {
				f = zap.String(f.Key, c.r.Replace(err.Error()))
			}
		case zapcore.StringerType:
			f = zap.String(f.Key, c.r.Replace(fmt.Sprint(f.Interface)))
		}
		out[i] = f
	}
	return out
}
