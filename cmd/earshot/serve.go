package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/earshot-voice/earshot/api"
	"github.com/earshot-voice/earshot/audiohook"
	"github.com/earshot-voice/earshot/auth"
	"github.com/earshot-voice/earshot/metrics"
	"github.com/earshot-voice/earshot/session"
	"github.com/earshot-voice/earshot/store"
	"github.com/earshot-voice/earshot/voiceprint"
)

// serve runs the service until ctx is cancelled, then drains.
func serve(ctx context.Context, args []string, stderr io.Writer) error {
	cfg, err := parseConfig(args, stderr, os.Getenv)
	if err != nil {
		return err
	}
	log, err := newLogger(stderr, cfg.logLevel, cfg.logFormat)
	if err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	defer log.Sync() //nolint:errcheck // nothing to do about it at exit
	log.Info("starting", zap.String("version", versionString()))
	// The certificate is checked before anything is created, its expiry
	// exported once the registry exists.
	var certNotAfter time.Time
	if cfg.tlsCert != "" {
		if certNotAfter, err = certificateNotAfter(cfg.tlsCert, cfg.tlsKey); err != nil {
			return err
		}
		log.Info("TLS certificate", zap.Time("not_after", certNotAfter))
	}
	warnOpenDataDir(log, cfg.dataDir)

	mk, created, err := auth.LoadOrCreateMasterKey(os.Getenv(masterKeyEnv), filepath.Join(cfg.dataDir, "master.key"))
	if err != nil {
		return fmt.Errorf("master key: %w", err)
	}
	if created {
		log.Info("generated a master key; back it up, or set "+masterKeyEnv, zap.String("path", filepath.Join(cfg.dataDir, "master.key")))
	}

	st, err := store.Open(ctx, cfg.databaseURL, cfg.dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	log.Info("store open", zap.String("backend", st.Backend()))
	// The first start's credentials entry is at warn level; it is written
	// whatever --log-level says, since it is the only one.
	bootLog := log
	if lvl, _ := zapcore.ParseLevel(cfg.logLevel); lvl > zapcore.WarnLevel {
		if bootLog, err = newLogger(stderr, zapcore.WarnLevel.String(), cfg.logFormat); err != nil {
			return err
		}
	}
	bootOpts := auth.BootstrapOptions{AllowList: cfg.bootstrapAllow}
	if cfg.dataDir != "" {
		bootOpts.CredentialsFile = filepath.Join(cfg.dataDir, auth.CredentialsFileName)
	}
	creds, err := auth.BootstrapWith(ctx, st, mk, bootLog, bootOpts)
	if err != nil {
		return err
	}
	if creds != nil {
		// This first start hashed the admin password with Argon2id
		// (64 MiB). The heap is otherwise small at this point, and a
		// serving process may not collect again for minutes: give that
		// memory back now, so that resident memory says what the calls
		// cost.
		debug.FreeOSMemory()
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := metrics.New(reg, build())
	if certExpiry := metrics.NewTLSCertificate(reg); !certNotAfter.IsZero() {
		certExpiry.Set(certNotAfter)
	}

	credentials, err := voiceprint.NewSealerAEAD(mk.NewAEAD("credential seal v1"))
	if err != nil {
		return err
	}
	sopts := session.Options{
		Sealer:                credentials,
		SessionTimeout:        cfg.sessionTimeout,
		MaxAudioTotalDuration: cfg.maxAudioTotalDuration,
		Observer:              m,
		ReplicaID:             replicaID(),
		StreamGrace:           cfg.streamGrace,
		LeaseTTL:              cfg.leaseTTL,
	}
	if st.Shared() {
		// Other replicas may use the database: hear them, and tell them.
		sopts.Peers = st
	}
	sessions := session.NewManager(st, voiceprint.NewRegistry(), sopts, log.Named("session"))
	defer sessions.Close()
	log.Info("replica", zap.String("replica_id", sopts.ReplicaID), zap.Bool("shared_store", st.Shared()))
	if err := sessions.Resume(ctx); err != nil {
		return err
	}

	// API keys are read through the sessions' circuit breaker: while the
	// database is unreachable, REST answers 503 at once.
	keyStore := guardedKeyStore{Store: st, sessions: sessions}
	keys := auth.NewKeys(keyStore, mk)
	// One pair of failed-authentication limiters for every interface,
	// AudioHook upgrades included.
	addrLimiter, keyLimiter := api.NewAddrLimiter(), api.NewKeyLimiter()
	hook := audiohook.NewHandler(audiohook.Options{
		Authenticator: hookAuth{keys},
		Consumer:      hookConsumer{sessions},
		Observer:      m,
		Logger:        log.Named("audiohook"),
		Limiter:       hookLimiter{addr: addrLimiter, key: keyLimiter, proxies: cfg.trustedProxies},
	})

	metricsHandler := promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
	opts := api.Options{
		Sessions:  sessions,
		AudioHook: hook,
		Keys:      keys,
		Ready: func(ctx context.Context) error {
			if err := sessions.StoreAvailable(); err != nil {
				return err
			}
			return st.Ping(ctx)
		},
		Observer: m,
		Logger:   log.Named("api"),
		Singles:  api.SessionScorer{Sessions: sessions},
	}
	// The identity provider, the tenant-scoped and the management
	// interfaces. The first signing key is made now, at first start, not
	// at the first token request.
	signing := auth.NewSigningKeys(st, mk, auth.SigningKeysOptions{Lifetime: cfg.signingKeyLifetime, Logger: log.Named("auth")})
	if err := signing.Ensure(ctx); err != nil {
		return err
	}
	opts.Identity = &api.Identity{
		Issuer:         auth.NewIssuer(st, signing, mk, auth.IssuerOptions{PublicURL: cfg.publicURL, Logger: log.Named("auth")}),
		Keys:           auth.NewKeys(keyStore, mk),
		KeyAdmin:       auth.NewKeyAdmin(st),
		AllowList:      auth.NewAllowList(st),
		Admin:          auth.NewAdmin(st, mk),
		Services:       cfg.services,
		TrustedProxies: cfg.trustedProxies,
		AddrLimiter:    addrLimiter,
		KeyLimiter:     keyLimiter,
		Audit:          log.Named("audit"),
	}
	opts.Security = m
	opts.MaxUploadBytes = cfg.maxUploadBytes
	handler := api.New(opts)

	servers := []*server{{name: "api", addr: cfg.addr, handler: handler, tls: cfg.tlsCert != ""}}
	if cfg.metricsAddr != "" {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", metricsHandler)
		servers = append(servers, &server{name: "metrics", addr: cfg.metricsAddr, handler: mux})
	}
	if cfg.pprofAddr != "" {
		// Profiles under load, on their own listener only: they
		// reveal memory and are unauthenticated.
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		servers = append(servers, &server{name: "pprof", addr: cfg.pprofAddr, handler: mux})
	}
	errc := make(chan error, len(servers))
	for _, s := range servers {
		if err := s.listen(log); err != nil {
			return err
		}
		log.Info("listening", zap.String("server", s.name), zap.String("addr", s.ln.Addr().String()),
			zap.String("public_url", cfg.publicURL))
		go func() { errc <- s.serve(cfg) }()
	}

	select {
	case <-ctx.Done():
		log.Info("shutting down", zap.Duration("drain_timeout", cfg.drainTimeout))
	case err = <-errc:
		log.Error("server failed; shutting down", zap.Error(err))
	}
	// Drain: /ready turns 503, every call finalises its session and is
	// disconnected, then the HTTP servers stop; sessions.Close (deferred)
	// writes what is still pending.
	handler.SetDraining()
	drainCtx, cancel := context.WithTimeout(context.Background(), cfg.drainTimeout)
	defer cancel()
	if herr := hook.Shutdown(drainCtx); herr != nil {
		log.Warn("calls still open at the drain timeout were dropped", zap.Error(herr))
	}
	for _, s := range servers {
		if serr := s.srv.Shutdown(drainCtx); serr != nil {
			log.Warn("drain incomplete", zap.String("server", s.name), zap.Error(serr))
		}
	}
	log.Info("stopped")
	return err
}

// server is one listening HTTP server.
type server struct {
	name    string
	addr    string
	handler http.Handler
	tls     bool
	ln      net.Listener
	srv     *http.Server
}

// listen binds the address and prepares the http.Server.
func (s *server) listen(log *zap.Logger) error {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("%s server: %w", s.name, err)
	}
	stdlog, _ := zap.NewStdLogAt(log.Named("http"), zap.WarnLevel)
	s.ln = ln
	s.srv = &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// Twice the API's own limit, so that the API answers oversized
		// headers first, in JSON; beyond this the HTTP server answers 431
		// itself, in plain text, without reading them.
		MaxHeaderBytes: 2 * api.DefaultMaxHeaderBytes,
		ErrorLog:       stdlog,
	}
	return nil
}

// serve blocks until the server is shut down; a shutdown returns nil.
func (s *server) serve(cfg config) error {
	var err error
	if s.tls {
		err = s.srv.ServeTLS(s.ln, cfg.tlsCert, cfg.tlsKey)
	} else {
		err = s.srv.Serve(s.ln)
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("%s server: %w", s.name, err)
}

// guardedKeyStore reads API keys through the sessions' circuit breaker.
type guardedKeyStore struct {
	auth.Store
	sessions *session.Manager
}

func (g guardedKeyStore) APIKeyByLookup(ctx context.Context, lookup string) (k auth.APIKey, err error) {
	gerr := g.sessions.GuardStore("api_key", func() error {
		k, err = g.Store.APIKeyByLookup(ctx, lookup)
		if errors.Is(err, auth.ErrNotFound) {
			return nil // an answer, not a failure of the store
		}
		return err
	})
	if gerr != nil {
		return auth.APIKey{}, gerr
	}
	return k, err
}

// replicaID names this process among the replicas: the host name (the pod
// name on Kubernetes) and a random suffix, new at every start.
func replicaID() string {
	host, _ := os.Hostname()
	if len(host) > 64 {
		host = host[:64]
	}
	b := make([]byte, 4)
	rand.Read(b)
	if host == "" {
		return hex.EncodeToString(b)
	}
	return host + "-" + hex.EncodeToString(b)
}

// certificateNotAfter loads the TLS certificate and key as the server will
// and returns when the certificate expires.
func certificateNotAfter(certFile, keyFile string) (time.Time, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return time.Time{}, fmt.Errorf("--tls-cert, --tls-key: %w", err)
	}
	return cert.Leaf.NotAfter, nil
}
