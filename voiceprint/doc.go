// Package voiceprint is Earshot's speaker model: it turns the feature vectors of a caller's voice
// into a biometric template, seals the template into the credential that
// clients store (a register session's result), scores new
// audio against an opened credential (verify_session), estimates how
// authentic a collection is, and holds the registry of built-in models
// behind model_hash (GET /v1/models). Its figures are measured, and
// reported apart for real and synthetic voices: it claims no more than
// was measured (docs/EVALUATION.md).
//
// # Model
//
// A Gaussian-mixture universal background model (GMM-UBM): 64 diagonal
// Gaussians over the 39-dimensional vectors of a features.Extractor made
// with Model.Features (13 static MFCCs with the log energy in place of c0,
// deltas, delta-deltas, mean and variance normalised over a centred 3 s
// window), trained on synthetic telephone speech and calibrated on
// synthetic and real voices (see models/README.md).
// Each frame is evaluated against all components over the first 20
// dimensions; the 16 best of those that can still matter (within 12 nats
// of the best complete one) are completed over all dimensions and carry
// the frame's posterior (Reynolds et al., "Speaker verification using
// adapted Gaussian mixture models", 2000, for the top-C idea). The zeroth
// and first order statistics of a collection give the speaker's
// MAP-adapted means (relevance factor 16). Before scoring, both sides are projected away
// from the directions of largest within-speaker variability of the
// training data (nuisance attribute projection, Solomonoff et al. 2005).
// The score is the expected log-likelihood ratio per frame of the adapted
// model against the UBM under the UBM's frame posteriors (a linear
// approximation of the frame-by-frame LLR, Glembek et al. 2009, computable
// from statistics alone), mapped to 0–1 by a logistic calibration fitted on
// held-out training corpora; the model's DefaultSimilarityThreshold is the
// equal-error point of their real-voice trials.
//
// # Streaming
//
// An Enroller and a Verifier are fed by the call's goroutine: ObservePCM
// for every 10 ms hop of PCM with its voice decision, Add (or AddVectors)
// for every vector the extractor emits. Both allocate nothing per frame and
// cost about 3 µs per voiced frame of speech (see the benchmarks); an
// Enroller holds about 92 KB whatever the length of the call. Template,
// Result and Authenticity summarise at the end.
//
// # Credential
//
// Sealer seals a Template with AES-256-GCM under a key the caller supplies
// (the server derives it from its master key) into an opaque base64url
// string that names its format version, tenant and model in a clear,
// authenticated header; see CredentialVersion for the layout. Open tells
// a malformed, unknown-version, foreign-tenant, other-model or tampered
// credential apart with sentinel errors.
//
// # Authenticity
//
// Besides the speaker statistics, the collector estimates the pitch of
// every voiced hop (normalised autocorrelation at 4 kHz), so that a change
// of speaker shows as a change of median pitch across a segment boundary.
// See Authenticity for exactly what is measured and what is not: it is not
// a deepfake detector.
//
// The package is pure: no goroutines, no logging, no global mutable state.
// Models, Registries and Sealers are safe for concurrent use; an Enroller
// or a Verifier belongs to one goroutine.
package voiceprint
