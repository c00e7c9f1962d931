package features_test

import (
	"fmt"
	"math"

	"github.com/earshot-voice/earshot/features"
)

// Push one second of 8 kHz audio in 10 ms hops, the first 0.3 s marked
// unvoiced by the VAD, then flush at the end of the stream.
func Example() {
	e, err := features.New(features.Options{}) // 8 kHz, 60 values per vector
	if err != nil {
		panic(err)
	}
	hop := make([]int16, e.HopSize())
	var vecs []float32
	for h := 0; h < 100; h++ {
		for i := range hop {
			t := float64(h*len(hop)+i) / 8000
			hop[i] = int16(4000*math.Sin(2*math.Pi*440*t) + 2000*math.Sin(2*math.Pi*1250*t))
		}
		voiced := h >= 30
		vecs, _, err = e.Append(vecs, hop, voiced)
		if err != nil {
			panic(err)
		}
	}
	vecs, _ = e.Flush(vecs)
	fmt.Println("dim:", e.Dim())
	fmt.Println("vectors:", len(vecs)/e.Dim())
	// Frames 29..97 (centred in hops 30..98) are voiced.
	// Output:
	// dim: 60
	// vectors: 69
}

// Utterance-level normalisation: extract unnormalised vectors, then
// normalise the whole utterance at once.
func ExampleNormalize() {
	e, err := features.New(features.Options{Norm: features.NormOff, NumCepstra: 13})
	if err != nil {
		panic(err)
	}
	pcm := make([]int16, 50*e.HopSize())
	for i := range pcm {
		pcm[i] = int16(3000 * math.Sin(float64(i)*float64(i)/4e5)) // a chirp
	}
	vecs, _, _ := e.Append(nil, pcm, true)
	vecs, _ = e.Flush(vecs)
	if err := features.Normalize(vecs, e.Dim(), true); err != nil {
		panic(err)
	}
	var mean, sq float64
	n := len(vecs) / e.Dim()
	for f := 0; f < n; f++ {
		x := float64(vecs[f*e.Dim()+1]) // c1
		mean += x / float64(n)
		sq += x * x / float64(n)
	}
	fmt.Printf("%d vectors of %d; c1 mean %.3f, variance %.3f\n", n, e.Dim(), math.Abs(mean), sq-mean*mean)
	// Output:
	// 48 vectors of 39; c1 mean 0.000, variance 1.000
}
