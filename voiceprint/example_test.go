package voiceprint_test

import (
	"bytes"
	"fmt"

	"github.com/earshot-voice/earshot/voiceprint"
)

// Enrol a caller from live audio, seal the credential for the client, and
// later verify new audio against it. In the service the PCM comes from
// codec, the voice decisions from vad and the vectors from a
// features.Extractor made with m.Features, one 10 ms hop at a time.
func Example() {
	m := voiceprint.NewRegistry().Models()[0]

	pcm, _ := readFixture("enrol_s01.s16")
	e := m.NewEnroller()
	_ = feedPCM(m, pcm, e) // ObservePCM per hop, AddVectors per voiced vector
	tmpl, err := e.Template()
	if err != nil {
		fmt.Println(err)
		return
	}
	sealer, _ := voiceprint.NewSealer(bytes.Repeat([]byte{1}, 32)) // derived from the master key
	credential, _ := sealer.Seal("tenant-1", tmpl)

	for _, test := range []string{"test_s01.s16", "test_s06.s16"} {
		opened, err := sealer.Open("tenant-1", m, credential)
		if err != nil {
			fmt.Println(err)
			return
		}
		v, _ := m.NewVerifier(opened)
		pcm, _ := readFixture(test)
		_ = feedPCM(m, pcm, v)
		decision := "NO_MATCH"
		if v.Result().Score >= m.DefaultSimilarityThreshold {
			decision = "MATCH"
		}
		fmt.Println(test, decision)
	}
	_, err = sealer.Open("tenant-2", m, credential)
	fmt.Println(err)
	// Output:
	// test_s01.s16 MATCH
	// test_s06.s16 NO_MATCH
	// voiceprint: credential belongs to another tenant
}
