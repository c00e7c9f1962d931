package eval

import (
	"math"
	"testing"
)

func TestCommonSource(t *testing.T) {
	for _, tc := range []struct{ a, b, want string }{
		{"real", "real", "real"},
		{"synthetic", "synthetic", "synthetic"},
		{"real", "synthetic", ""},
		{"", "real", ""},
		{"", "", ""},
	} {
		if got := commonSource(tc.a, tc.b); got != tc.want {
			t.Errorf("commonSource(%q, %q) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestVerifyBySource(t *testing.T) {
	// Real: genuine raw 0.9, 0.8, 0.3; impostor raw 0.1, 0.6. Synthetic:
	// perfectly separated. The cross-source trials (source "") would spoil
	// both if they were counted.
	tr := func(src string, genuine bool, raw float64) Trial {
		return Trial{Source: src, Genuine: genuine, Raw: raw, Score: raw}
	}
	trials := []Trial{
		tr("real", true, 0.9), tr("real", true, 0.8), tr("real", true, 0.3),
		tr("real", false, 0.1), tr("real", false, 0.6),
		tr("synthetic", true, 0.95), tr("synthetic", false, 0.05),
		tr("", true, 0.0), tr("", false, 1.0), tr("", false, 0.99),
	}
	got := verifyBySource(trials, 0.5)
	if len(got) != 2 {
		t.Fatalf("sources %v, want real and synthetic only", got)
	}
	for _, tc := range []struct {
		src      string
		gen, imp int
		frr, far float64
	}{
		{src: "real", gen: 3, imp: 2, frr: 1.0 / 3, far: 0.5},
		{src: "synthetic", gen: 1, imp: 1, frr: 0, far: 0},
	} {
		t.Run(tc.src, func(t *testing.T) {
			v := got[tc.src]
			if v.GenuineTrials != tc.gen || v.ImpostorTrials != tc.imp {
				t.Errorf("trials %d/%d, want %d/%d", v.GenuineTrials, v.ImpostorTrials, tc.gen, tc.imp)
			}
			if v.EER == nil {
				t.Fatal("no EER")
			}
			if math.Abs(v.FalseRejectRate-tc.frr) > 1e-12 || math.Abs(v.FalseAcceptRate-tc.far) > 1e-12 {
				t.Errorf("FRR/FAR at 0.5 = %v/%v, want %v/%v", v.FalseRejectRate, v.FalseAcceptRate, tc.frr, tc.far)
			}
			g, im := []float64{}, []float64{}
			for _, tr := range trials {
				if tr.Source != tc.src {
					continue
				}
				if tr.Genuine {
					g = append(g, tr.Raw)
				} else {
					im = append(im, tr.Raw)
				}
			}
			want, _, _ := EER(g, im)
			if *v.EER != want {
				t.Errorf("EER %v, want %v (the source's own trials only)", *v.EER, want)
			}
		})
	}
	if v := verifyBySource([]Trial{tr("real", true, 0.9)}, 0.5)["real"]; v.EER != nil || v.GenuineTrials != 1 {
		t.Errorf("genuine trials only: %+v, want no EER and the count", v)
	}
}

// TestVerifyFiguresRawEER: the calibration rounds the highest scores to 1,
// where genuine and impostor trials would tie; the EER comes from the raw
// scores, which still tell them apart.
func TestVerifyFiguresRawEER(t *testing.T) {
	var trials []Trial
	for i := range 10 {
		trials = append(trials,
			Trial{Genuine: true, Raw: 40 + float64(i), Score: 1},
			Trial{Genuine: false, Raw: 30 + float64(i)/2, Score: 1},
			Trial{Genuine: false, Raw: -float64(i), Score: 0.1})
	}
	v := verifyFigures(trials, 0.5)
	if v.EER == nil || *v.EER != 0 {
		t.Errorf("EER %v, want 0 (the raw scores separate the trials)", v.EER)
	}
	if v.EERThreshold == nil || *v.EERThreshold != 1 {
		t.Errorf("EER threshold %v, want the calibrated score 1 of the trial at the raw crossing", v.EERThreshold)
	}
	if v.FalseRejectRate != 0 || v.FalseAcceptRate != 0.5 {
		t.Errorf("FRR/FAR at 0.5 = %v/%v, want 0/0.5 (calibrated scores)", v.FalseRejectRate, v.FalseAcceptRate)
	}
}

func TestAuthBySource(t *testing.T) {
	cols := []AuthCollection{
		{Source: "real", Kind: "genuine", Score: 0.9}, {Source: "real", Kind: "genuine", Score: 0.7},
		{Source: "real", Kind: "mix", Score: 0.1}, {Source: "real", Kind: "mix", Score: 0.85}, {Source: "real", Kind: "mix", Score: 0.2}, {Source: "real", Kind: "mix", Score: 0.3},
		{Source: "real", Kind: "loop", Score: 0.0},
		{Source: "synthetic", Kind: "genuine", Score: 0.99}, {Source: "synthetic", Kind: "loop", Score: 0.95},
		{Source: "", Kind: "mix", Score: 0.99}, // a real voice mixed with a synthetic one: neither
		{Source: "real", Kind: "overlap", Score: 0.5},
	}
	got := authBySource(cols, 0.8)
	for _, tc := range []struct {
		src  string
		want SourceAuth
	}{
		{"real", SourceAuth{GenuinePassRate: 0.5, MixRejectRate: 0.75, LoopRejectRate: 1, Genuine: 2, Mixes: 4, Loops: 1}},
		{"synthetic", SourceAuth{GenuinePassRate: 1, MixRejectRate: 0, LoopRejectRate: 0, Genuine: 1, Mixes: 0, Loops: 1}},
	} {
		if got[tc.src] != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.src, got[tc.src], tc.want)
		}
	}
	if _, ok := got[""]; ok || len(got) != 2 {
		t.Errorf("sources %v, want real and synthetic only", got)
	}
}

func TestMerge(t *testing.T) {
	a := &Corpus{Dir: "/x/corpus", Utterances: []Utterance{
		{Dir: "/x/corpus", Speaker: "s1", BaseVoice: "v", ID: "s1_u0", Source: "synthetic"},
		{Dir: "/x/corpus", Speaker: "s2", BaseVoice: "v", ID: "s2_u0", Source: "synthetic"},
	}, Calls: []Call{{Dir: "/x/corpus", File: "calls/c.ulaw"}}}
	b := &Corpus{Dir: "/y/corpus/", Utterances: []Utterance{
		{Dir: "/y/corpus/", Speaker: "s1", BaseVoice: "v", ID: "s1_u0", Source: "real"},
	}}
	if got := Merge(a); got != a {
		t.Error("Merge of one corpus is not that corpus")
	}
	m := Merge(b, a)
	if m.Dir != "/y/corpus/,/x/corpus" || len(m.Calls) != 1 || m.Calls[0].Dir != "/x/corpus" {
		t.Errorf("dir %q, calls %+v", m.Dir, m.Calls)
	}
	want := []struct{ spk, base, id, dir string }{
		{"corpus-2/s1", "corpus-2/v", "corpus-2/s1_u0", "/x/corpus"},
		{"corpus-2/s2", "corpus-2/v", "corpus-2/s2_u0", "/x/corpus"},
		{"corpus/s1", "corpus/v", "corpus/s1_u0", "/y/corpus/"},
	}
	if len(m.Utterances) != len(want) {
		t.Fatalf("%d utterances, want %d", len(m.Utterances), len(want))
	}
	for i, w := range want {
		u := m.Utterances[i]
		if u.Speaker != w.spk || u.BaseVoice != w.base || u.ID != w.id || u.Dir != w.dir {
			t.Errorf("utterance %d: %s %s %s %s, want %+v", i, u.Speaker, u.BaseVoice, u.ID, u.Dir, w)
		}
	}
	if a.Utterances[0].Speaker != "s1" || b.Utterances[0].Speaker != "s1" {
		t.Error("Merge modified its inputs")
	}
}
