package main

import (
	"context"
	"fmt"
	"io"
)

// cmdMeasure is being built (issue 4).
func cmdMeasure(ctx context.Context, args []string, stdout, stderr io.Writer, environ []string) int {
	fmt.Fprintln(stderr, "ssatd measure: not available in this build yet")
	return 2
}
