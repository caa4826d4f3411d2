package main

import (
	"context"
	"io"

	"github.com/ssatd/ssatd/internal/measure"
)

// cmdMeasure is `ssatd measure` (docs/measuring.md): what compression costs
// the guest per page, offline (-pages), against live origins (-url) or
// against a running daemon (-proxy).
func cmdMeasure(ctx context.Context, args []string, stdout, stderr io.Writer, environ []string) int {
	return measure.Main(ctx, args, stdout, stderr, environ)
}
