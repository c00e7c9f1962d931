// Package vad finds the voice in a live telephone channel: a streaming voice
// activity detector over 8 kHz (or 16 kHz) 16-bit PCM in 10 ms frames. It is
// the VAD stage of the audio path (decode → VAD → features): only voiced
// frames feed the speaker features, and
// the share of voiced frames is the session's vad_percentage.
//
// It has to work from the first second of a call whose noise level nobody
// knows, so nothing in it is calibrated to an absolute level:
//
//   - Each frame is analysed over a 16 ms Hann window (the frame and the
//     end of the previous one) with a 128-point FFT, in nine sub-bands
//     between 125 and 3875 Hz. 16 kHz input is first decimated to 8 kHz.
//   - Every band tracks its own noise power. The estimate starts from the
//     second frame, falls quickly when the power falls, follows slowly while
//     the power stays near it, and is pulled up when even the minimum over
//     the last second lies well above it, so a louder background is learned
//     within about three seconds and speech, which always dips, is not.
//   - A frame is voiced when the mean of its band SNRs (in dB) passes 6 dB
//     (2.5 dB to stay voiced), and its power above the noise is within
//     40 dB of the loudest recent frame (breath and room tails far below
//     the talker are not speech).
//   - Voiced frames less than 400 ms apart are joined into one segment; a
//     segment needs four voiced frames to count. It is extended over the
//     faint frames (mean band SNR above 1 dB) just before its first voiced
//     frame, up to 80 ms, and just after its last, up to 150 ms: soft
//     onsets and decays are kept, digital silence is not.
//
// Joining pauses and extending speech backwards needs look-ahead, so the
// decisions come out with a fixed delay: the value Process returns is the
// decision for the frame Delay() frames (40, that is 400 ms) earlier, and
// Flush returns the pending ones when the stream ends. A stationary sound
// that is there from the start (hum, a tone, steady noise) is background,
// never voice.
//
// In a stereo contact-centre call the caller leg often carries an echo of
// the agent. Given the agent leg as a reference (ProcessWithReference), the
// detector learns the echo delay (0–310 ms) and power coupling from the two
// legs' power above their noise floors (leaving out frames where the leg is
// louder than any echo could be: within 15 dB of the reference), and counts
// twice the predicted echo power as noise, so an echo of the agent is not
// taken for the caller's voice.
//
// Measured frame F1 (speech as the positive class, 10 ms frames) with
// TestCorpus on labelled corpora in earshot eval's format, dev split (the
// constants were chosen on other splits): 0.99 on utterances (clean;
// telephone band with white, pink or brown noise at 15–20 dB SNR, some
// through GSM; long gaps), 0.99 on the caller leg of stereo calls with the
// agent leg as reference (0.83 without it) and 0.996 on the agent leg.
// Speech much quieter than −50 dBFS is missed more often: the noise
// estimate has a floor at −70 dBFS.
//
// The package is pure: no goroutines, no logging, no global state, and no
// allocation after New. The same input gives the same decisions.
package vad
