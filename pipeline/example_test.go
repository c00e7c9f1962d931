package pipeline_test

import (
	"fmt"

	"github.com/earshot-voice/earshot/codec"
	"github.com/earshot-voice/earshot/features"
	"github.com/earshot-voice/earshot/pipeline"
)

// counter is a Sink that counts what the pipeline hands it.
type counter struct{ hops, voiced, vectors int }

func (c *counter) Hop(pcm []int16, voiced bool) {
	c.hops++
	if voiced {
		c.voiced++
	}
}

func (c *counter) Features(vecs []float32, n int) { c.vectors += n }

// A pipeline for a mono µ-law call, fed one second of silence in 200 ms
// frames, as AudioHook sends them: every 10 ms hop gets a voice decision
// (the last 400 ms at Flush, when the VAD's look-ahead is cut short), and
// silence gives no voiced hop and no feature vector.
func ExampleNew() {
	p, err := pipeline.New(pipeline.Options{Encoding: codec.MuLaw, SampleRate: 8000, Channels: 1, Reference: -1,
		Features: features.Options{NumCepstra: 13, NormVariance: true}})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := &counter{}
	p.SetSink(c)
	silence := make([]byte, 1600) // 200 ms of µ-law
	for i := range silence {
		silence[i] = 0xFF // µ-law zero
	}
	for range 5 {
		if err := p.Write(silence); err != nil {
			fmt.Println(err)
			return
		}
	}
	p.Flush()
	fmt.Printf("dim %d: %d hops, %d voiced, %d vectors\n", p.Dim(), c.hops, c.voiced, c.vectors)
	// Output: dim 39: 100 hops, 0 voiced, 0 vectors
}
