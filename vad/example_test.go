package vad_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/earshot-voice/earshot/vad"
)

// synthetic returns 3 s of 8 kHz audio: a quiet hiss throughout and, from
// 1.0 s to 2.0 s, a buzzy vowel-like sound (a 120 Hz pulse train through a
// resonance at 700 Hz).
func synthetic() []int16 {
	r := rand.New(rand.NewPCG(1, 2))
	pcm := make([]int16, 3*8000)
	var y1, y2 float64
	for i := range pcm {
		x := 0.0
		if i >= 8000 && i < 16000 && i%67 == 0 {
			x = 4000
		}
		y := x + 1.85*math.Cos(2*math.Pi*700/8000)*y1 - 0.857*y2
		y2, y1 = y1, y
		pcm[i] = int16(y + 30*r.NormFloat64())
	}
	return pcm
}

func Example() {
	d, err := vad.New(vad.Options{}) // 8 kHz
	if err != nil {
		panic(err)
	}
	pcm := synthetic()
	var decisions []bool
	for f := 0; f+d.FrameSize() <= len(pcm); f += d.FrameSize() {
		voiced, err := d.Process(pcm[f : f+d.FrameSize()])
		if err != nil {
			panic(err)
		}
		// The first Delay() calls decide no frame.
		if f/d.FrameSize() >= d.Delay() {
			decisions = append(decisions, voiced)
		}
	}
	decisions = d.Flush(decisions) // the stream ended
	for i := 0; i < len(decisions); i++ {
		if decisions[i] && (i == 0 || !decisions[i-1]) {
			j := i
			for j < len(decisions) && decisions[j] {
				j++
			}
			fmt.Printf("voice from %.2f s to %.2f s\n", float64(i)/100, float64(j)/100)
		}
	}
	fmt.Printf("%d frames, %.1f%% voiced, decisions %d ms late\n", d.Frames(), d.VoicedPercentage(), 10*d.Delay())
	// Output:
	// voice from 1.00 s to 2.01 s
	// 300 frames, 33.7% voiced, decisions 400 ms late
}
