package eval

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const manifestHeader = "wav,ulaw,split,speaker,utterance,source,engine,gender,condition,noise,snr_db,codec,level_dbfs,duration_s,speech_start_s,speech_end_s,speech_s,segments,clipped,text,prompt\n"

func TestParseManifest(t *testing.T) {
	tests := []struct {
		name    string
		csv     string
		want    []Utterance
		wantErr string // substring of the error; "" for none
	}{
		{
			name: "make-corpus row with quoted text",
			csv: manifestHeader +
				`wav/s01/s01_u00.wav,ulaw/s01/s01_u00.ulaw,dev,s01,s01_u00,synthetic,flite,m,telephone,pink,19.5,g711,-21.0,6.608,1.82,5.03,2.90,1.82-3.52;3.83-5.03,0,"My voice is my password, please verify me.",` + "\n",
			want: []Utterance{{Line: 2, WAV: "wav/s01/s01_u00.wav", ULaw: "ulaw/s01/s01_u00.ulaw", Speaker: "s01", ID: "s01_u00",
				Source: "synthetic", Condition: "telephone", Split: "dev", DurationS: 6.608, Segments: []Segment{{1.82, 3.52}, {3.83, 5.03}}}},
		},
		{
			name: "quotes, doubled quotes and a newline inside a field",
			csv: manifestHeader +
				`a.wav,,dev,s02,s02_u01,real,real,f,gappy,,,g711,,4.0,,,,"0.5-1.0;2-3",0,"She said ""hello,
world"".",` + "\n" +
				`b.wav,,dev,s02,s02_u02,real,real,f,clean,,,g711,,2.0,,,,,0,plain,` + "\n",
			want: []Utterance{
				{Line: 2, WAV: "a.wav", Speaker: "s02", ID: "s02_u01", Source: "real", Condition: "gappy", Split: "dev", DurationS: 4,
					Segments: []Segment{{0.5, 1}, {2, 3}}},
				// The quoted field above spans two lines: this row is line 4.
				{Line: 4, WAV: "b.wav", Speaker: "s02", ID: "s02_u02", Source: "real", Condition: "clean", Split: "dev", DurationS: 2},
			},
		},
		{
			name: "minimal columns, segments sorted",
			csv:  "speaker,utterance,condition,segments,ulaw\ns1,u1,clean,2-3;0.5-1,x.ulaw\n",
			want: []Utterance{{Line: 2, ULaw: "x.ulaw", Speaker: "s1", ID: "u1", Condition: "clean",
				Segments: []Segment{{0.5, 1}, {2, 3}}}},
		},
		{name: "header only", csv: manifestHeader, want: []Utterance{}},
		{name: "empty file", csv: "", wantErr: "manifest.csv is empty"},
		{name: "missing column", csv: "speaker,utterance,condition,ulaw\ns,u,clean,x\n", wantErr: `no column "segments"`},
		{name: "no audio column", csv: "speaker,utterance,condition,segments\ns,u,clean,\n", wantErr: "neither a ulaw nor a wav column"},
		{name: "too few fields", csv: "speaker,utterance,condition,segments,ulaw\ns,u,clean,0-1\n", wantErr: "line 2: wrong number of fields"},
		{name: "too many fields", csv: "speaker,utterance,condition,segments,ulaw\ns,u,clean,0-1,x,y\n", wantErr: "line 2: wrong number of fields"},
		{name: "unterminated quote", csv: "speaker,utterance,condition,segments,ulaw\ns,u,clean,\"0-1,x\n", wantErr: "line 2"},
		{name: "empty speaker", csv: "speaker,utterance,condition,segments,ulaw\n,u,clean,0-1,x\n", wantErr: "line 2: empty speaker"},
		{name: "no audio file", csv: "speaker,utterance,condition,segments,ulaw,wav\ns,u,clean,0-1,,\n", wantErr: "line 2: no audio file"},
		{name: "segment without dash", csv: "speaker,utterance,condition,segments,ulaw\ns,u,clean,1.5,x\n", wantErr: `line 2: segments: segment "1.5" is not start-end`},
		{name: "segment not numbers", csv: "speaker,utterance,condition,segments,ulaw\ns,u,clean,a-b,x\n", wantErr: "not seconds"},
		{name: "segment backwards", csv: "speaker,utterance,condition,segments,ulaw\ns,u,clean,3-2,x\n", wantErr: "ends before it starts"},
		{name: "bad duration", csv: "speaker,utterance,condition,segments,ulaw,duration_s\ns,u,clean,0-1,x,long\n", wantErr: `line 2: duration_s "long"`},
		{name: "duplicate utterance", csv: "speaker,utterance,condition,segments,ulaw\ns,u,clean,0-1,x\ns,u,clean,0-1,y\n", wantErr: `line 3: utterance "u" already on line 2`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseManifest(strings.NewReader(tt.csv), "manifest.csv")
			if tt.wantErr != "" {
				if err == nil || !errors.Is(err, ErrCorpus) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want ErrCorpus with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseSpeakers(t *testing.T) {
	tests := []struct {
		name    string
		csv     string
		want    map[string]string
		wantErr string
	}{
		{"make-corpus rows", "speaker,split,source,engine,voice,gender,base_voice,pitch_cents,tempo,espeak_pitch,espeak_speed,package,licence\n" +
			`dev_s01,dev,synthetic,flite,kal16,m,kal,0,1.0,,,flite,"synthetic (engine licences: flite BSD-like, espeak-ng GPL-3)"` + "\n" +
			`dev_real_allison,dev,real,real,Allison Smith (en-US + es-MX),f,real_allison,0,1.0,,,"a,b",CC-BY-SA-3.0` + "\n",
			map[string]string{"dev_s01": "kal", "dev_real_allison": "real_allison"}, ""},
		{"no base_voice column", "speaker,voice\ns,v\n", nil, `no column "base_voice"`},
		{"empty base voice", "speaker,base_voice\ns,\n", nil, "line 2: empty base_voice"},
		{"twice", "speaker,base_voice\ns,a\ns,b\n", nil, `line 3: speaker "s" listed twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSpeakers(strings.NewReader(tt.csv), "speakers.csv")
			if tt.wantErr != "" {
				if !errors.Is(err, ErrCorpus) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want ErrCorpus with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestParseCalls(t *testing.T) {
	calls, err := ParseCalls(strings.NewReader(
		"file,wav,segments,duration_s,caller,agent,caller_speech_s,agent_speech_s,caller_noise,agent_noise,echo_on_caller,turns\n"+
			"calls/call_01.ulaw,calls/call_01.wav,calls/call_01.segments.csv,158.44,dev_s13,dev_s02,48.8,62.7,pink@-50dBFS,white@-61dBFS,yes,40\n"),
		"calls.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := []Call{{Line: 2, File: "calls/call_01.ulaw", WAV: "calls/call_01.wav", SegmentsFile: "calls/call_01.segments.csv", DurationS: 158.44}}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("got %+v, want %+v", calls, want)
	}
	for name, in := range map[string]string{
		"no segments column": "file,wav\na,b\n",
		"no audio":           "file,wav,segments\n,,s.csv\n",
		"empty segments":     "file,segments\na,\n",
	} {
		if _, err := ParseCalls(strings.NewReader(in), "calls.csv"); !errors.Is(err, ErrCorpus) {
			t.Errorf("%s: err = %v, want ErrCorpus", name, err)
		}
	}
}

func TestParseCallSegments(t *testing.T) {
	tests := []struct {
		name          string
		csv           string
		caller, agent []Segment
		wantErr       string
	}{
		{"make-corpus rows", "channel,speaker,start_s,end_s,text\n" +
			`2,dev_s02,1.63,6.46,"Thank you for calling, how can I help?"` + "\n" +
			"1,dev_s13,7.21,7.57,Yes.\n" +
			"1,dev_s13,0.5,1.0,Hi.\n",
			[]Segment{{0.5, 1}, {7.21, 7.57}}, []Segment{{1.63, 6.46}}, ""},
		{"channel 3", "channel,start_s,end_s\n3,0,1\n", nil, nil, `line 2: channel "3" is not 1 or 2`},
		{"backwards", "channel,start_s,end_s\n1,2,1\n", nil, nil, "line 2: segment 2.00-1.00 ends before it starts"},
		{"not a number", "channel,start_s,end_s\n1,x,1\n", nil, nil, `line 2: start_s "x"`},
		{"negative", "channel,start_s,end_s\n1,-1,1\n", nil, nil, `line 2: start_s "-1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			caller, agent, err := ParseCallSegments(strings.NewReader(tt.csv), "c.segments.csv")
			if tt.wantErr != "" {
				if !errors.Is(err, ErrCorpus) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want ErrCorpus with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(caller, tt.caller) || !reflect.DeepEqual(agent, tt.agent) {
				t.Errorf("got %v %v %v, want %v %v", caller, agent, err, tt.caller, tt.agent)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	write := func(t *testing.T, dir string, files map[string]string) {
		for name, data := range files {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Run("sorted, with base voices and calls", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, map[string]string{
			"speakers.csv": "speaker,base_voice\nb,kal\na,slt\n",
			"manifest.csv": "speaker,utterance,condition,segments,ulaw\nb,b_u1,clean,0-1,x\na,a_u2,clean,0-1,x\na,a_u1,gappy,0-1,x\n",
			"calls.csv":    "file,segments\ncalls/c2.ulaw,calls/c2.csv\ncalls/c1.ulaw,calls/c1.csv\n",
			"calls/c1.csv": "channel,start_s,end_s\n1,0,1\n2,1,2\n",
			"calls/c2.csv": "channel,start_s,end_s\n2,3,4\n",
		})
		c, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		var ids, bases []string
		for _, u := range c.Utterances {
			ids = append(ids, u.ID)
			bases = append(bases, u.BaseVoice)
		}
		if want := []string{"a_u1", "a_u2", "b_u1"}; !reflect.DeepEqual(ids, want) {
			t.Errorf("utterances %v, want %v", ids, want)
		}
		if want := []string{"slt", "slt", "kal"}; !reflect.DeepEqual(bases, want) {
			t.Errorf("base voices %v, want %v", bases, want)
		}
		if want := []string{"a", "b"}; !reflect.DeepEqual(c.Speakers(), want) {
			t.Errorf("speakers %v, want %v", c.Speakers(), want)
		}
		if len(c.Calls) != 2 || c.Calls[0].File != "calls/c1.ulaw" ||
			!reflect.DeepEqual(c.Calls[0].Caller, []Segment{{0, 1}}) || !reflect.DeepEqual(c.Calls[0].Agent, []Segment{{1, 2}}) ||
			c.Calls[1].Caller != nil || !reflect.DeepEqual(c.Calls[1].Agent, []Segment{{3, 4}}) {
			t.Errorf("calls %+v", c.Calls)
		}
	})
	t.Run("no calls.csv", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, map[string]string{
			"speakers.csv": "speaker,base_voice\na,slt\n",
			"manifest.csv": "speaker,utterance,condition,segments,ulaw\na,u,clean,0-1,x\n",
		})
		c, err := Load(dir)
		if err != nil || len(c.Calls) != 0 || len(c.Utterances) != 1 {
			t.Fatalf("Load = %+v, %v", c, err)
		}
	})
	for name, files := range map[string]map[string]string{
		"speaker without base voice": {
			"speakers.csv": "speaker,base_voice\na,slt\n",
			"manifest.csv": "speaker,utterance,condition,segments,ulaw\nb,u,clean,0-1,x\n",
		},
		"no speakers.csv": {"manifest.csv": "speaker,utterance,condition,segments,ulaw\na,u,clean,0-1,x\n"},
		"missing segments file": {
			"speakers.csv": "speaker,base_voice\na,slt\n",
			"manifest.csv": "speaker,utterance,condition,segments,ulaw\na,u,clean,0-1,x\n",
			"calls.csv":    "file,segments\nc.ulaw,c.csv\n",
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, files)
			if _, err := Load(dir); !errors.Is(err, ErrCorpus) {
				t.Errorf("err = %v, want ErrCorpus", err)
			}
		})
	}
}

func FuzzParseManifest(f *testing.F) {
	f.Add(manifestHeader + `a.wav,a.ulaw,dev,s,u,synthetic,flite,m,telephone,pink,19.5,g711,-21.0,6.608,1.82,5.03,2.90,1.82-3.52;3.83-5.03,0,"x, ""y""",` + "\n")
	f.Add("speaker,utterance,condition,segments,ulaw\ns,u,clean,2-3;0.5-1,x\n")
	f.Add("speaker,utterance,condition,segments,ulaw\ns,u,clean,\"0-1,x\n")
	f.Add("speaker,utterance,condition,segments,ulaw\ns,u,clean,3-2,x\n")
	f.Fuzz(func(t *testing.T, in string) {
		utts, err := ParseManifest(strings.NewReader(in), "manifest.csv")
		if err != nil {
			if !errors.Is(err, ErrCorpus) {
				t.Fatalf("error %v does not wrap ErrCorpus", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, u := range utts {
			if u.Speaker == "" || u.ID == "" || u.Condition == "" || (u.WAV == "" && u.ULaw == "") || seen[u.ID] {
				t.Fatalf("accepted an invalid row: %+v", u)
			}
			seen[u.ID] = true
			for i, g := range u.Segments {
				if !(g.Start >= 0 && g.End > g.Start) || (i > 0 && g.Start < u.Segments[i-1].Start) {
					t.Fatalf("accepted bad segments %v", u.Segments)
				}
			}
		}
	})
}

func FuzzParseCallSegments(f *testing.F) {
	f.Add("channel,speaker,start_s,end_s,text\n2,s,1.63,6.46,\"a, b\"\n1,s,7.21,7.57,Yes.\n")
	f.Add("channel,start_s,end_s\n3,0,1\n")
	f.Fuzz(func(t *testing.T, in string) {
		caller, agent, err := ParseCallSegments(strings.NewReader(in), "c.csv")
		if err != nil {
			if !errors.Is(err, ErrCorpus) {
				t.Fatalf("error %v does not wrap ErrCorpus", err)
			}
			return
		}
		for _, segs := range [][]Segment{caller, agent} {
			for i, g := range segs {
				if !(g.Start >= 0 && g.End > g.Start) || (i > 0 && g.Start < segs[i-1].Start) {
					t.Fatalf("accepted bad segments %v", segs)
				}
			}
		}
	})
}
