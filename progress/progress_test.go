package progress

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRender(t *testing.T) {
	tests := []struct {
		name      string
		s         Status
		bar, line string
	}{
		{"half", Status{Elapsed: 10 * time.Second, Fraction: 0.5, Detail: "jobs 5/10"},
			"[============            ]  50%  jobs 5/10  00:10 ETA 00:10",
			"run: 00:10 elapsed, jobs 5/10; 50% done, ETA 00:10"},
		{"start", Status{Detail: "jobs 0/4"},
			"[                        ]   0%  jobs 0/4  00:00 ETA --:--",
			"run: 00:00 elapsed, jobs 0/4; 0% done, ETA --:--"},
		{"done, long", Status{Elapsed: 3725 * time.Second, Fraction: 1, Detail: "x"},
			"[========================] 100%  x  1:02:05 ETA 00:00",
			"run: 1:02:05 elapsed, x; 100% done, ETA 00:00"},
		{"out of range", Status{Elapsed: time.Second, Fraction: 7, Detail: "y"},
			"[========================] 100%  y  00:01 ETA 00:00",
			"run: 00:01 elapsed, y; 100% done, ETA 00:00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Bar(tt.s); got != tt.bar {
				t.Errorf("bar  %q\nwant %q", got, tt.bar)
			}
			if got := Line("run", tt.s); got != tt.line {
				t.Errorf("line %q\nwant %q", got, tt.line)
			}
		})
	}
}

func TestStart(t *testing.T) {
	var b strings.Builder
	Start(&b, true, "run", func() Status { return Status{Fraction: 1, Detail: "done"} })()
	if got := b.String(); !strings.HasPrefix(got, "\r\x1b[K[====") || !strings.HasSuffix(got, "\n") {
		t.Errorf("final bar %q: want a redraw ending the line", got)
	}
	b.Reset()
	Start(&b, false, "run", func() Status { return Status{Fraction: 0.25, Detail: "d"} })()
	if got := b.String(); !strings.HasPrefix(got, "run: 00:00 elapsed, d; 25% done, ETA ") || !strings.HasSuffix(got, "\n") {
		t.Errorf("final line %q", got)
	}
	Start(nil, true, "run", nil)() // no output: nothing to stop
}

func ExampleBar() {
	fmt.Println(Bar(Status{Elapsed: 90 * time.Second, Fraction: 0.75, Detail: "calls 75/100"}))
	// Output: [==================      ]  75%  calls 75/100  01:30 ETA 00:30
}
