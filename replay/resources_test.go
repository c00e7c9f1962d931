package replay

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseSample(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    serverSample
		wantErr string
	}{
		{"earshot", `# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 12.5
# TYPE process_resident_memory_bytes gauge
process_resident_memory_bytes 1.048576e+08
# TYPE earshot_audiohook_streams_active gauge
earshot_audiohook_streams_active 2000
# TYPE earshot_audiohook_frames_received_total counter
earshot_audiohook_frames_received_total 600000
# TYPE earshot_frames_dropped_total counter
earshot_frames_dropped_total{reason="queue_full"} 3
earshot_frames_dropped_total{reason="undecodable"} 1
`, serverSample{cpu: 12.5, rss: 104857600, streams: 2000, hasStreams: true, framesRecv: 600000, framesDrop: 4}, ""},
		{"another server: the process collector only", `process_cpu_seconds_total 3
process_resident_memory_bytes 5e+07
`, serverSample{cpu: 3, rss: 5e7}, ""},
		{"no process collector", "up 1\n", serverSample{}, "process_cpu_seconds_total"},
		{"not the text format", "<html>hello</html>", serverSample{}, "text format parsing error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseSample(strings.NewReader(tt.text))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// TestServerWatch: the figures are the differences between the first and
// the last sample, the peak is the sample with the most streams, and a
// failed scrape is counted, not fatal.
func TestServerWatch(t *testing.T) {
	var scrape atomic.Int64
	pages := []string{
		"process_cpu_seconds_total 10\nprocess_resident_memory_bytes 2.097152e+07\nearshot_audiohook_streams_active 0\nearshot_audiohook_frames_received_total 0\n",
		"process_cpu_seconds_total 11\nprocess_resident_memory_bytes 1.2582912e+08\nearshot_audiohook_streams_active 1000\nearshot_audiohook_frames_received_total 5000\n",
		"",
		"process_cpu_seconds_total 12\nprocess_resident_memory_bytes 1.048576e+08\nearshot_audiohook_streams_active 0\nearshot_audiohook_frames_received_total 9000\nearshot_frames_dropped_total{reason=\"queue_full\"} 2\n",
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(scrape.Add(1) - 1)
		if pages[min(i, len(pages)-1)] == "" {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, pages[min(i, len(pages)-1)])
	}))
	defer srv.Close()
	ctx := context.Background()
	w, err := startServerWatch(ctx, srv.URL, func() int64 { return 0 })
	if err != nil {
		t.Fatal(err)
	}
	w.sample(ctx) // 1000 streams
	w.sample(ctx) // fails
	got := w.finish(ctx, 2000)
	want := Server{URL: srv.URL, CPUSeconds: 2, MSPerCallSecond: 1, RSSBeforeMiB: 20, PeakStreams: 1000, RSSAtPeakMiB: 120,
		RSSPerCallKiB: 122.88, RSSPerAddedCallKiB: 102.4, FramesReceived: 9000, FramesDropped: 2, Samples: 3,
		ScrapeErrors: 1, ScrapeError: "status 503 Service Unavailable"}
	if *got != want {
		t.Errorf("got  %+v\nwant %+v", *got, want)
	}
}

func TestServerWatchRefusesABadEndpoint(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	if _, err := startServerWatch(context.Background(), srv.URL, nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("err = %v, want the 404", err)
	}
}

func TestPlateau(t *testing.T) {
	t0 := time.Now()
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	tests := []struct {
		name        string
		history     []point
		peak        int64
		wantMS      float64
		wantSeconds float64
	}{
		{"ramp, plateau, end", []point{{at(0), 0, 0}, {at(2), 1, 500}, {at(4), 3, 1000}, {at(6), 5, 1000}, {at(8), 7, 1000}, {at(10), 8, 200}},
			1000, 1000 * 4.0 / 4000, 4},
		{"a dip inside the plateau counts at its own streams", []point{{at(0), 0, 1000}, {at(2), 1, 600}, {at(4), 2, 1000}},
			1000, 1000 * 2.0 / (1600 + 1600), 4},
		{"one sample at the peak", []point{{at(0), 0, 10}, {at(2), 1, 1000}, {at(4), 2, 10}}, 1000, 0, 0},
		{"no streams", []point{{at(0), 0, 0}, {at(2), 1, 0}}, 0, 0, 0},
	}
	for _, tt := range tests {
		ms, s := plateau(tt.history, tt.peak)
		if math.Abs(ms-tt.wantMS) > 1e-9 || s != tt.wantSeconds {
			t.Errorf("%s: got %v ms per call-second over %v s, want %v over %v", tt.name, ms, s, tt.wantMS, tt.wantSeconds)
		}
	}
}
