package session

import (
	"slices"
	"testing"

	"github.com/earshot-voice/earshot/codec"
)

func TestFrameQueue(t *testing.T) {
	var q frameQueue
	for i := range maxQueuedFrames + 3 {
		dropped := q.push([]byte{byte(i)})
		if dropped != (i >= maxQueuedFrames) {
			t.Fatalf("push %d dropped=%v", i, dropped)
		}
	}
	if q.dropped != 3 {
		t.Fatalf("dropped %d", q.dropped)
	}
	var got []byte
	for f := q.pop(); f != nil; f = q.pop() {
		got = append(got, (*f)[0])
		q.recycle(f)
	}
	want := make([]byte, 0, maxQueuedFrames)
	for i := 3; i < maxQueuedFrames+3; i++ {
		want = append(want, byte(i))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("popped %v, want the newest %d in order", got, maxQueuedFrames)
	}
	if raceEnabled {
		t.Log("allocations not counted: the race detector makes sync.Pool drop buffers")
		return
	}
	frame := make([]byte, 3200)
	if a := testing.AllocsPerRun(100, func() { q.push(frame); q.recycle(q.pop()) }); a != 0 {
		t.Fatalf("%v allocations per frame once buffers are recycled", a)
	}
}

func TestMediaSelection(t *testing.T) {
	offer := []MediaOffer{
		{Format: "PCMU", Channels: []string{"external", "internal"}, Rate: 8000},
		{Format: "PCMU", Channels: []string{"external"}, Rate: 8000},
		{Format: "PCMU", Channels: []string{"internal"}, Rate: 8000},
	}
	mono := AudioSettings{Codec: "mulaw", SampleRate: 8000, Channels: 1, Channel: "external"}
	tests := []struct {
		name     string
		settings AudioSettings
		offered  []MediaOffer
		want     int
	}{
		{"mono external", mono, offer, 1},
		{"mono internal", AudioSettings{Codec: "mulaw", SampleRate: 8000, Channels: 1, Channel: "internal"}, offer, 2},
		{"stereo", AudioSettings{Codec: "mulaw", SampleRate: 8000, Channels: 2, Channel: "external"}, offer, 0},
		{"alaw is never offered", AudioSettings{Codec: "alaw", SampleRate: 8000, Channels: 1, Channel: "external"}, offer, -1},
		{"pcm16 needs L16", AudioSettings{Codec: "pcm16", SampleFormat: "s16le", SampleRate: 8000, Channels: 1, Channel: "external"}, offer, -1},
		{"L16 offered", AudioSettings{Codec: "pcm16", SampleFormat: "s16le", SampleRate: 8000, Channels: 1, Channel: "external"},
			[]MediaOffer{{Format: "L16", Channels: []string{"external"}, Rate: 8000}}, 0},
		{"mono wanted, only stereo offered", mono, offer[:1], -1},
		{"nothing offered", mono, nil, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := selectMedia(tt.settings, tt.offered); got != tt.want {
				t.Fatalf("selectMedia = %d, want %d", got, tt.want)
			}
		})
	}
	if got := defaultMedia(offer); got != 1 {
		t.Errorf("default media %d, want mono external", got)
	}
	if got := defaultMedia(offer[:1]); got != 0 {
		t.Errorf("default media of a stereo-only offer %d, want stereo", got)
	}
	fits := []struct {
		spec StreamSpec
		want bool
	}{
		{StreamSpec{Encoding: codec.MuLaw, SampleRate: 8000, Channels: []string{"external"}}, true},
		{StreamSpec{Encoding: codec.MuLaw, SampleRate: 8000, Channels: []string{"external", "internal"}}, true},
		{StreamSpec{Encoding: codec.MuLaw, SampleRate: 8000, Channels: []string{"internal"}}, false},
		{StreamSpec{Encoding: codec.L16, SampleRate: 8000, Channels: []string{"external"}}, false},
		{StreamSpec{}, false},
	}
	for _, f := range fits {
		if got := mediaFits(mono, f.spec); got != f.want {
			t.Errorf("mediaFits(mono external, %+v) = %v", f.spec, got)
		}
	}
	if v, r := legIndexes([]string{"internal", "external"}, "external"); v != 1 || r != 0 {
		t.Errorf("legIndexes = %d, %d", v, r)
	}
	if v, r := legIndexes([]string{"external"}, "external"); v != 0 || r != -1 {
		t.Errorf("legIndexes mono = %d, %d", v, r)
	}
}
