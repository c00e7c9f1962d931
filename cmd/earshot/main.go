// Command earshot is the Earshot voice-registration edge service.
//
// Usage:
//
//	earshot [serve] [flags]   run the service (the default)
//	earshot version           print the version
//	earshot health [--url U]  exit 0 when the service at U answers /alive
//	earshot replay [flags] F  replay recorded calls to an AudioHook server
//	earshot eval [flags]      measure the audio path on a labelled corpus
//	earshot help, --help      list the commands
//
// Every serve flag has an environment equivalent: --log-level is
// EARSHOT_LOG_LEVEL, and so on. A flag given on the command line wins.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "earshot:", err)
		os.Exit(1)
	}
}

// run dispatches a subcommand. It returns when the command is done or ctx
// is cancelled.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && isHelpFlag(args[0]) {
		// earshot --help lists the commands; earshot serve --help lists
		// serve's flags.
		cmd, args = "help", args[1:]
	} else if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, stderr)
	case "version":
		fmt.Fprintln(stdout, versionString())
		return nil
	case "health":
		return health(ctx, args, stderr)
	case "replay":
		return replayCommand(ctx, args, stdout, stderr)
	case "eval":
		return evalCommand(ctx, args, stdout, stderr)
	case "help":
		fmt.Fprintln(stdout, usage)
		return nil
	}
	fmt.Fprintln(stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
}

// isHelpFlag reports whether arg asks for help as the flag package takes
// it: -h, -help, --h or --help.
func isHelpFlag(arg string) bool {
	switch arg {
	case "-h", "-help", "--h", "--help":
		return true
	}
	return false
}

const usage = `usage: earshot [command] [flags]

commands:
  serve     run the service (default); earshot serve -h lists its flags
  version   print the version
  health    check a running service's /alive endpoint (for container health checks)
  replay    replay recorded calls to an AudioHook server as a load test; earshot replay -h lists its flags
  eval      measure VAD, speaker verification, authenticity and speed on a labelled corpus; earshot eval -h lists its flags
  help      print this list`
