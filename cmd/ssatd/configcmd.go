package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ssatd/ssatd/internal/config"
)

// configFlags parses the -config and -config-format flags shared by serve
// and config check, and the command's own flags, which extra declares.
// code is the exit status when ok is false. A -config-format is returned
// as config.FormatEnv in environ, so that a reload reads the file the same
// way.
func configFlags(name string, args []string, stdout, stderr io.Writer, environ []string, extra ...func(*flag.FlagSet)) (path string, env []string, code int, ok bool) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("config", "", "configuration file (TOML); default $SSATD_CONFIG")
	format := fs.String("config-format", "", "the file's format: ssatd or trusted-server (upstream's trusted-server.toml); default $"+config.FormatEnv+", else read from the file's keys")
	for _, f := range extra {
		f(fs)
	}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: ssatd %s -config FILE\n", name)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), "\n"+envUsage)
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return "", nil, code, false
	}
	if *file == "" {
		*file = lookupEnv(environ, "SSATD_CONFIG")
	}
	if *format != "" {
		environ = append(slices.Clip(environ), config.FormatEnv+"="+*format)
	}
	return *file, environ, 0, true
}

// loadConfig parses -config and loads the file: the start of serve and
// config check. code is the exit status when cfg is nil: 0 after -h, 2
// for usage, 1 for a configuration that has problems (all of them printed).
// environ is the environment the file was read with, -config-format
// included.
func loadConfig(name string, args []string, stdout, stderr io.Writer, environ []string, extra ...func(*flag.FlagSet)) (cfg *config.Config, path string, env []string, code int) {
	path, environ, code, ok := configFlags(name, args, stdout, stderr, environ, extra...)
	if !ok {
		return nil, "", nil, code
	}
	cfg, err := config.Load(path, environ)
	if err != nil {
		printProblems(stderr, path, err)
		return nil, path, environ, 1
	}
	return cfg, path, environ, 0
}

// printProblems writes each configuration problem on its own line; with no
// file named, it says how to name one, since that is the likely mistake.
func printProblems(w io.Writer, path string, err error) {
	if path == "" {
		defer fmt.Fprint(w, "no configuration file was named: pass -config FILE or set SSATD_CONFIG\n")
	}
	var list *config.Errors
	if errors.As(err, &list) {
		fmt.Fprintf(w, "configuration %s has %d problem(s):\n", describe(path), len(list.List))
		for _, e := range list.List {
			fmt.Fprintf(w, "  - %v\n", e)
		}
		return
	}
	fmt.Fprintf(w, "configuration %s: %v\n", describe(path), err)
}

func describe(path string) string {
	if path == "" {
		return "(environment only)"
	}
	return fmt.Sprintf("%q", path)
}

func cmdConfigCheck(args []string, stdout, stderr io.Writer, environ []string) int {
	cfg, path, _, code := loadConfig("config check", positionalConfig(args), stdout, stderr, environ)
	if cfg == nil {
		return code
	}
	for _, w := range cfg.Warnings() {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	for _, n := range cfg.Source.NotEmulated {
		fmt.Fprintf(stderr, "accepted, not emulated: %s\n", n)
	}
	format := ""
	if path != "" {
		format = " (format: " + formatName(cfg.Source.Format) + ")"
	}
	fmt.Fprintf(stdout, "# configuration %s is valid%s; effective settings (secrets masked):\n", describe(path), format)
	if err := cfg.WriteEffective(stdout); err != nil {
		fmt.Fprintf(stderr, "ssatd config check: %v\n", err)
		return 1
	}
	return 0
}

// formatName says which format a file was read as.
func formatName(f config.Format) string {
	if f == config.FormatTrustedServer {
		return "trusted-server, mapped onto ssatd's settings"
	}
	return string(config.FormatSSATD)
}

// positionalConfig lets config check and config convert take the file as
// their one argument (ssatd config convert trusted-server.toml), as
// -config FILE: their other flag taking a value is -config-format. A
// second argument, or one beside -config, stays one, which the flag parser
// refuses.
func positionalConfig(args []string) []string {
	out := make([]string, 0, len(args)+1)
	// With -config given, any argument is an extra one.
	taken := slices.ContainsFunc(args, func(a string) bool {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		return strings.HasPrefix(a, "-") && name == "config"
	})
	for i, a := range args {
		prev := ""
		if i > 0 {
			prev = strings.TrimLeft(args[i-1], "-")
		}
		if !taken && a != "" && a[0] != '-' && prev != "config" && prev != "config-format" {
			out, taken = append(out, "-config"), true
		}
		out = append(out, a)
	}
	return out
}
