package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"

	"github.com/earshot-voice/earshot/replay"
)

// replayCommand runs earshot replay: flags in, package replay does the
// work, the summary out. It fails when a call failed or, with --register,
// a session did not reach SUCCESS.
func replayCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("earshot replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: earshot replay --url URL --api-key KEY [flags] FILE...\n\n"+
			"Replays recorded calls (WAV: PCM16, µ-law or A-law, 8 or 16 kHz, mono or stereo; raw µ-law:\n"+
			".ulaw/.ul/.mulaw/.raw with --channels) to an AudioHook server as concurrent calls, and\n"+
			"prints a summary. Flags go before the files.\n\nflags:")
		fs.PrintDefaults()
	}
	var (
		o          replay.Options
		jsonFile   string
		cpuProfile string
		quiet      bool
		callIDFile string
	)
	fs.StringVar(&o.URL, "url", "", "AudioHook endpoint, ws:// or wss:// (a URL without a path gets /v1/audiohook)")
	fs.StringVar(&o.APIKey, "api-key", "", "API key (X-API-KEY; apikey for the REST calls of --register)")
	fs.StringVar(&o.ClientSecret, "client-secret", "", "AudioHook client secret, base64 as Genesys takes it; signs the upgrades")
	fs.StringVar(&o.OrganizationID, "org-id", "", "organization id (UUID) of every call; default a random one per run")
	fs.Func("call-id", "conversation id (a UUID) of the next call, so that it feeds the session created for that call_id; repeat it for more calls", func(v string) error {
		o.CallIDs = append(o.CallIDs, v)
		return nil
	})
	fs.StringVar(&callIDFile, "call-ids", "", "file of conversation ids, one per line (like --call-id for each)")
	fs.IntVar(&o.Calls, "calls", 0, "number of calls (default 1, or one per call id)")
	fs.IntVar(&o.Concurrency, "concurrency", 0, "calls in progress at once (default: all of them)")
	fs.Float64Var(&o.Rate, "rate", 0, "new calls per second at most (0: no bound)")
	fs.Float64Var(&o.Speed, "speed", 1, "audio pace: 1 real time, 2 twice as fast, 0 as fast as possible")
	fs.DurationVar(&o.FrameDuration, "frame", 0, "audio per binary frame (default 200ms)")
	fs.DurationVar(&o.Duration, "duration", 0, "cap on each call's audio (default: the whole file)")
	fs.StringVar(&o.Offer, "offer", replay.OfferGenesys, "media offered in open: genesys (stereo, external, internal; the server picks), stereo, or mono (external)")
	fs.IntVar(&o.Channels, "channels", 1, "channels of raw µ-law files: 1, or 2 (external, internal interleaved)")
	fs.BoolVar(&o.Register, "register", false, "create audio settings and a register session per call (Earshot REST API), and poll it to a terminal state")
	fs.BoolVar(&o.RegisterAfterOpen, "register-after-open", false, "with --register, create each session once its call has opened (before its audio) instead of before the call")
	fs.Float64Var(&o.RegisterShare, "register-share", 1, "with --register, the share of calls that register, spread evenly (0.2: every fifth call)")
	fs.StringVar(&o.APIURL, "api-url", "", "REST base URL for --register (default: from --url)")
	fs.StringVar(&o.ModelHash, "model-hash", "", "model of the register sessions (default: the first of GET /v1/models)")
	fs.DurationVar(&o.AudioTotalDuration, "audio-total-duration", 0, "audio_total_duration of the register sessions (default: the audio each call streams)")
	fs.Float64Var(&o.AuthenticityThreshold, "authenticity-threshold", 0, "authenticity_threshold of the register sessions")
	fs.DurationVar(&o.PollTimeout, "poll-timeout", 0, "how long a session may stay PROCESSING_AUDIO after its call (default 60s)")
	fs.StringVar(&o.ServerMetrics, "server-metrics", "", "the server's Prometheus endpoint (e.g. http://127.0.0.1:9090/metrics): report its CPU per call-second, memory per call and dropped frames")
	fs.StringVar(&jsonFile, "json", "", "also write the summary as JSON to this file")
	fs.StringVar(&cpuProfile, "cpu-profile", "", "write a CPU profile of the replay itself to this file (to check that the generator is not the bottleneck)")
	fs.BoolVar(&quiet, "quiet", false, "no progress report")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if callIDFile != "" {
		ids, err := readCallIDs(callIDFile)
		if err != nil {
			return err
		}
		o.CallIDs = append(o.CallIDs, ids...)
	}
	o.Files = fs.Args()
	for _, f := range o.Files {
		if strings.HasPrefix(f, "-") {
			return fmt.Errorf("flag %s after the files: flags go before the files", f)
		}
	}
	if o.URL == "" || o.APIKey == "" || len(o.Files) == 0 {
		fs.Usage()
		return errors.New("replay needs --url, --api-key and at least one file")
	}
	if !quiet {
		o.Progress = stderr
		if isTerminal(stderr) {
			o.ProgressBar = true
		}
	}
	if cpuProfile != "" {
		stop, err := startCPUProfile(cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	summary, err := replay.Run(ctx, o)
	if err != nil {
		return err
	}
	if err := summary.WriteText(stdout); err != nil {
		return err
	}
	if jsonFile != "" {
		if err := writeJSONFile(jsonFile, summary); err != nil {
			return err
		}
	}
	if p := summary.Problems(); len(p) > 0 {
		return errors.New("replay: " + strings.Join(p, "; "))
	}
	if ctx.Err() != nil {
		return errors.New("replay: interrupted")
	}
	return nil
}

// maxCallIDFile bounds the file of --call-ids: replay.MaxCallIDs ids
// with room for spaces and comments.
const maxCallIDFile = 8 << 20

// readCallIDs reads a file of --call-ids: one id per line; blank lines
// and lines starting with # are skipped. The ids are checked by replay.
func readCallIDs(file string) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("--call-ids: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCallIDFile+1))
	if err != nil {
		return nil, fmt.Errorf("--call-ids: %w", err)
	}
	if len(data) > maxCallIDFile {
		return nil, fmt.Errorf("--call-ids: %s is larger than %d bytes", file, maxCallIDFile)
	}
	var ids []string
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ids = append(ids, line)
	}
	return ids, nil
}

// startCPUProfile starts profiling this process's CPU into file; the
// returned function stops and closes it.
func startCPUProfile(file string) (stop func(), err error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
