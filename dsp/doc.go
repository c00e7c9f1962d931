// Package dsp holds the signal-processing kernels that more than one stage
// of the audio path needs, so that each exists once, is tested once
// against a textbook reference, and is measured once: today the real FFT
// behind the MFCC features.
//
// Like codec, vad and features, it is pure: no goroutines, no logging, no
// global state but constant tables. Kernels are prepared once for a fixed
// size (their tables and work buffers made then), and a call on a frame
// allocates nothing. It imports nothing of the project, so every stage may
// use it.
package dsp
