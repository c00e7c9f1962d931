package features

import "errors"

// Sentinel errors returned by New, Append, Flush and Normalize.
var (
	// ErrSampleRate: Options.SampleRate is neither 8000 nor 16000.
	ErrSampleRate = errors.New("features: unsupported sample rate")
	// ErrNumFilters: Options.NumFilters is outside [4, 64].
	ErrNumFilters = errors.New("features: number of mel filters out of range")
	// ErrNumCepstra: Options.NumCepstra is outside [2, NumFilters].
	ErrNumCepstra = errors.New("features: number of cepstra out of range")
	// ErrBand: the mel band is empty, reaches above the Nyquist frequency,
	// or is so narrow that a filter covers no FFT bin.
	ErrBand = errors.New("features: invalid mel band")
	// ErrNorm: Options.Norm is unknown or Options.NormWindow is outside [0, 30000].
	ErrNorm = errors.New("features: invalid normalisation options")
	// ErrHopLength: the PCM given to Append is not a whole number of hops.
	ErrHopLength = errors.New("features: input not a whole number of hops")
	// ErrDim: a vector buffer is not a whole number of vectors of a positive dimension.
	ErrDim = errors.New("features: buffer not a whole number of vectors")
)
