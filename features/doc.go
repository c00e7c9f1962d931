// Package features turns live telephone audio into the speaker feature
// vectors that Earshot's voiceprint models are trained and scored on:
// mel-frequency cepstral coefficients over 25 ms windows every 10 ms, for the
// frames the voice activity detector marked voiced, normalised. It is pure: no goroutines, no logging,
// no globals, append-style, and allocation-free per frame.
//
// # Stream model
//
// An Extractor is fed 10 ms hops of 16-bit PCM (80 samples at 8 kHz, 160 at
// 16 kHz) with the VAD's decision for each hop, and appends one vector per
// voiced frame. Every hop after the second completes a frame, voiced or
// not, so that deltas run over the continuous sequence (a frame's spectrum
// is only computed when a voiced frame lies within its delta context);
// only voiced frames are emitted, in order. A frame is complete with the hop that ends its
// 25 ms window; its vector leaves 4 hops later (the delta context) or,
// with the default centred normalisation, once 150 more voiced frames have
// followed it. Flush emits everything held back at the end of a stream;
// Reset starts over.
//
// # The vector
//
// With the zero Options a vector has 60 float32 values: 20 statics — the
// log frame energy in place of c0, then c1..c19 of 24 mel filters over
// 300–3400 Hz — followed by their 20 deltas and 20 delta-deltas
// (regression over ±2 frames). This is the front end used for GMM-UBM
// speaker verification on telephone speech: Reynolds, Quatieri and Dunn
// (Digital Signal Processing 10, 2000) used 19 mel-cepstra over 300–3400 Hz
// with deltas and channel compensation; Kaldi's GMM/i-vector SRE recipes use 20
// MFCCs with energy, deltas and delta-deltas (60 values) and a 300-frame
// sliding mean, on voiced frames. The higher cepstra (c13..c19) carry
// vocal-tract detail that speech recognisers drop and speaker recognisers
// use, which is why the 39-value ASR layout (NumCepstra: 13) is available
// but not the default. The band is the telephone band at both sample rates
// (16 kHz audio uses a 512-point FFT with the same 31.25 Hz bins), so one
// model serves both. The window is Hamming; see Extractor for every step
// and constant.
//
// For the voiceprint package: the coefficients are not decorrelated
// between static and dynamic parts and have very different scales (on the
// dev corpus the standard deviation is 2.2 for log energy and 3.9 for c1,
// 0.08 for the highest delta-deltas),
// which a diagonal-covariance GMM handles by its per-dimension variances;
// floor those variances relative to the global variance of each dimension,
// not with one absolute constant. Log-likelihood-ratio scoring is
// unaffected by per-dimension scaling, which is why there is no liftering.
//
// # Normalisation
//
// By default (NormCentred) the statics of each vector have their mean over
// a window of 300 voiced frames (3 s of voice) centred on the vector
// subtracted: cepstral mean normalisation, which removes the telephone
// channel's fixed spectral tilt, as in Kaldi's speaker-recognition recipes.
// The look-ahead costs 1.5 s of voice of delay and, beyond the window,
// about 16 KB per extractor for the held vectors' deltas (nothing with
// NormVariance, whose window holds whole vectors), nothing in throughput; Flush releases the held vectors with
// the window cut at the end. In a 64-component GMM-UBM test on the
// project's synthetic dev corpus it gave a lower EER than a trailing
// window, whose first vectors are normalised by a few frames only
// (NormTrailing, for a caller that needs vectors without delay). Deltas
// are differences and need no mean removal. Options.NormVariance adds
// variance normalisation over all 60 values. For utterance-level statistics
// instead, extract with Norm: NormOff and call Normalize on the whole
// utterance. Feature warping (short-time Gaussianisation over a centred 3 s
// window) is not offered: it needs a rank per coefficient per frame, more
// work than the rest of the front end together.
//
// # Cost
//
// Everything a frame needs — window, FFT bit-reversal and twiddles,
// filterbank segments, folded DCT — is computed by New. The FFT is
// dsp.RealFFT, into which the extractor windows directly: a real
// transform of 256 (512) points done as a complex radix-8/4 FFT of 128
// (256) points over even/odd packed samples. On one
// core of the development machine (AMD EPYC, shared with other jobs, best
// of several runs) a voiced 8 kHz frame costs about 1.4 µs, some 7000
// times real time, and a 16 kHz frame about 2.4 µs (4000 times); with
// 40 % of the hops voiced, 8 kHz runs some 15000 times real time. The
// FFT alone takes 0.74 µs (256 points) and 1.7 µs (512). Run
// `go test -bench . ./features` for the figures of your machine
// (x_realtime). An 8 kHz extractor holds about 75 KB with NormVariance,
// 47 KB of it the normalisation window, and about 60 KB without.
package features
