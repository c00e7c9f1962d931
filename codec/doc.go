// Package codec turns telephone audio as it arrives on the wire or in a file
// into 16-bit linear PCM samples, and back.
//
// It exists because every other stage of Earshot (vad, features, voiceprint)
// works on int16 PCM at 8 kHz, while the audio reaches the service as G.711
// µ-law frames on an AudioHook WebSocket (headerless, channels interleaved
// per sample), as raw µ-law, A-law or little-endian 16-bit PCM described by
// REST audio settings (audio_codec "mulaw", "alaw", "pcm16"), or as a WAV
// upload on POST /api/public/singles (PCM16, µ-law or A-law, 8 or 16 kHz,
// mono or stereo).
//
// The package is pure: no goroutines, no logging, no global state. The frame
// functions are append-style, in the manner of strconv.AppendInt: they append
// to dst and return the extended slice, and allocate only when dst lacks
// capacity, so a per-call pipeline that reuses its buffers decodes with zero
// allocations per frame. The naming is uniform:
//
//   - Append<Codec>(dst []int16, src []byte) decodes: AppendMuLaw, AppendALaw, AppendL16.
//   - Append<Codec>Encode(dst []byte, src []int16) encodes: AppendMuLawEncode,
//     AppendALawEncode, AppendL16Encode.
//   - Append<Codec>Channel(dst []int16, src []byte, channels, channel int)
//     decodes one channel of interleaved audio without an intermediate buffer;
//     AppendChannel does the same for interleaved PCM.
//   - AppendDecode, AppendEncode and AppendDecodeChannel dispatch on an Encoding.
//
// G.711 comes from github.com/zaf/g711, used through its per-sample functions
// (its whole-buffer functions allocate); the library is the source of truth for
// every code. L16 is little-endian, as in the REST sample_format "s16le" and the
// AudioHook reference implementation.
//
// WAVReader parses RIFF/WAVE streams (PCM, A-law, µ-law and
// WAVE_FORMAT_EXTENSIBLE with those subformats) incrementally, without ever
// allocating what a header claims; WriteWAV writes them. Decimator turns 16 kHz
// audio into 8 kHz with an anti-aliasing half-band FIR filter, so that 16 kHz
// uploads reach the 8 kHz pipeline.
//
// Every function and method is safe for concurrent use on distinct values;
// a WAVReader or a Decimator belongs to one goroutine at a time.
package codec
