package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/earshot-voice/earshot/api"
	"github.com/earshot-voice/earshot/auth"
	"github.com/earshot-voice/earshot/session"
)

// config is the configuration of earshot serve.
type config struct {
	addr                  string
	dataDir               string
	databaseURL           string
	publicURL             string
	logLevel              string
	logFormat             string
	tlsCert, tlsKey       string
	metricsAddr           string
	pprofAddr             string
	drainTimeout          time.Duration
	sessionTimeout        time.Duration
	maxAudioTotalDuration float64
	trustedProxies        []netip.Prefix
	services              []string
	maxUploadBytes        int64
	signingKeyLifetime    time.Duration
	streamGrace           time.Duration
	leaseTTL              time.Duration
	bootstrapAllow        []netip.Prefix
}

// maxBootstrapAllow bounds the entries of --bootstrap-allow-cidrs.
const maxBootstrapAllow = 32

// envPrefix prefixes the environment equivalent of every flag.
const envPrefix = "EARSHOT_"

// envName returns the environment variable of a flag: --log-level is
// EARSHOT_LOG_LEVEL.
func envName(flagName string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parseConfig reads flags, with environment variables as defaults.
func parseConfig(args []string, stderr io.Writer, getenv func(string) string) (config, error) {
	var c config
	fs := flag.NewFlagSet("earshot serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.addr, "addr", ":8080", "address to serve HTTP (and WebSocket) on")
	fs.StringVar(&c.dataDir, "data-dir", "./earshot-data", "directory of the embedded database and the generated master key")
	fs.StringVar(&c.databaseURL, "database-url", "", "PostgreSQL URL (postgres://…); empty uses embedded SQLite in --data-dir")
	fs.StringVar(&c.publicURL, "public-url", "", "external base URL of this service, e.g. https://earshot.example.com (default: derived from --addr)")
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&c.logFormat, "log-format", "", "log format: json or console (default: json unless stderr is a terminal)")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "TLS certificate file (PEM); serve HTTPS with --tls-key")
	fs.StringVar(&c.tlsKey, "tls-key", "", "TLS private key file (PEM)")
	fs.StringVar(&c.metricsAddr, "metrics-addr", ":9090", "address of /metrics, apart from the API (unauthenticated: keep it off public networks); empty: no metrics")
	fs.StringVar(&c.pprofAddr, "pprof-addr", "", "address of the Go profiling endpoints /debug/pprof/ (default: off; keep it on loopback)")
	fs.DurationVar(&c.drainTimeout, "drain-timeout", 30*time.Second, "how long shutdown waits for requests and calls to finish")
	fs.DurationVar(&c.sessionTimeout, "session-timeout", session.DefaultSessionTimeout, "how long a session waits for its audio stream before failing with NoAudio")
	fs.Float64Var(&c.maxAudioTotalDuration, "max-audio-total-duration", session.DefaultMaxAudioTotalDuration, "largest audio_total_duration a session may ask for, in seconds")
	fs.DurationVar(&c.streamGrace, "stream-grace", session.DefaultStreamGrace, "how long a session whose stream was cut (replica lost, restart) waits for its call to reconnect before failing StreamInterrupted")
	fs.DurationVar(&c.leaseTTL, "lease-ttl", session.DefaultLeaseTTL, "with PostgreSQL, how long a replica may go without renewing its lease before the others take it for dead")
	proxies := fs.String("trusted-proxies", "", "comma-separated CIDRs of proxies whose X-Forwarded-For is believed")
	services := fs.String("services", auth.ServiceStreaming, "comma-separated services API keys may belong to; must include streaming")
	fs.Int64Var(&c.maxUploadBytes, "max-upload-bytes", api.DefaultMaxUploadBytes, "largest multipart upload to /api/public/singles, in bytes")
	fs.DurationVar(&c.signingKeyLifetime, "signing-key-lifetime", 30*24*time.Hour, "age at which the JWT signing key is replaced (0: only on POST /management/v1/signing_keys)")
	bootstrapAllow := fs.String("bootstrap-allow-cidrs", "", "comma-separated CIDRs allow-listed for management, beside loopback, by the first start (e.g. the pod network); later starts ignore it")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: earshot serve [flags]\n\nEvery flag can also be set with its environment variable, e.g. --log-level as "+envName("log-level")+".\n\nflags:")
		fs.PrintDefaults()
	}

	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		if v := getenv(envName(f.Name)); v != "" && envErr == nil {
			if err := f.Value.Set(v); err != nil {
				envErr = fmt.Errorf("%s=%q: %w", envName(f.Name), v, err)
			}
		}
	})
	if envErr != nil {
		return c, envErr
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if c.trustedProxies, err = parsePrefixes(*proxies); err != nil {
		return c, fmt.Errorf("--trusted-proxies: %w", err)
	}
	if c.services, err = parseServices(*services); err != nil {
		return c, fmt.Errorf("--services: %w", err)
	}
	if c.bootstrapAllow, err = parsePrefixes(*bootstrapAllow); err != nil {
		return c, fmt.Errorf("--bootstrap-allow-cidrs: %w", err)
	}
	if len(c.bootstrapAllow) > maxBootstrapAllow {
		return c, fmt.Errorf("--bootstrap-allow-cidrs: %d entries, at most %d", len(c.bootstrapAllow), maxBootstrapAllow)
	}
	return c, c.validate()
}

func (c *config) validate() error {
	var errs []error
	if (c.tlsCert == "") != (c.tlsKey == "") {
		errs = append(errs, errors.New("--tls-cert and --tls-key must be given together"))
	}
	switch c.logFormat {
	case "", "json", "console":
	default:
		errs = append(errs, fmt.Errorf("--log-format %q: must be json or console", c.logFormat))
	}
	if c.drainTimeout <= 0 {
		errs = append(errs, errors.New("--drain-timeout must be positive"))
	}
	if c.sessionTimeout <= 0 {
		errs = append(errs, errors.New("--session-timeout must be positive"))
	}
	if c.streamGrace <= 0 || c.streamGrace > time.Hour {
		errs = append(errs, errors.New("--stream-grace must be in (0, 1h]"))
	}
	if c.leaseTTL < time.Second || c.leaseTTL > 10*time.Minute {
		errs = append(errs, errors.New("--lease-ttl must be in [1s, 10m]"))
	}
	if c.maxAudioTotalDuration <= 0 || c.maxAudioTotalDuration > 3600 {
		errs = append(errs, errors.New("--max-audio-total-duration must be in (0, 3600] seconds"))
	}
	if c.maxUploadBytes <= 0 || c.maxUploadBytes > 1<<30 {
		errs = append(errs, errors.New("--max-upload-bytes must be in (0, 1 GiB]"))
	}
	if c.signingKeyLifetime != 0 && c.signingKeyLifetime < time.Hour {
		errs = append(errs, errors.New("--signing-key-lifetime must be 0 (never by age) or at least 1h"))
	}
	if c.databaseURL == "" && c.dataDir == "" {
		errs = append(errs, errors.New("--data-dir must not be empty without --database-url"))
	}
	if c.publicURL == "" {
		c.publicURL = defaultPublicURL(c.addr, c.tlsCert != "")
	}
	c.publicURL = strings.TrimSuffix(c.publicURL, "/")
	return errors.Join(errs...)
}

func defaultPublicURL(addr string, tls bool) string {
	scheme := "http"
	if tls {
		scheme = "https"
	}
	if strings.HasPrefix(addr, ":") {
		addr = "localhost" + addr
	}
	return scheme + "://" + addr
}

func parsePrefixes(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			addr, aerr := netip.ParseAddr(part)
			if aerr != nil {
				return nil, err
			}
			p = netip.PrefixFrom(addr, addr.BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// validService admits service names: short, lower-case, fit for a label.
var validService = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// parseServices parses the set of services of --services.
func parseServices(s string) ([]string, error) {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" || slices.Contains(out, part) {
			continue
		}
		if !validService.MatchString(part) {
			return nil, fmt.Errorf("%q: a service is 1 to 32 lower-case letters, digits, - and _, starting with a letter", part)
		}
		out = append(out, part)
	}
	if !slices.Contains(out, auth.ServiceStreaming) {
		return nil, errors.New("must include " + auth.ServiceStreaming + ", the service of the streaming interface")
	}
	return out, nil
}

// masterKeyEnv is the environment variable of the master key. It has no
// flag: a secret on a command line is visible to every local user.
const masterKeyEnv = "EARSHOT_MASTER_KEY"
