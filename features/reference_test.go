package features

import "math"

// refConfig is a resolved configuration for the reference implementation.
type refConfig struct {
	rate, nc, nf int
	low, high    float64
	norm         Norm
	window       int
	variance     bool
}

func defaultRef(rate int) refConfig {
	return refConfig{rate: rate, nc: 20, nf: 24, low: 300, high: 3400, window: 300}
}

// reference computes the extractor's output for a whole recording the slow
// and obvious way, in float64, independently of the production code: frame
// by frame with a naive DFT, mel weights evaluated per filter and bin from
// the triangle formula, a DCT-II by its definition, deltas over the whole
// frame sequence with clamped edges, and the normalisation window
// recomputed from scratch for every vector. It returns one []float64 per
// emitted vector, as if the recording were pushed and then flushed.
func reference(c refConfig, pcm []int16, voicedHops []bool) [][]float64 {
	hop, L := c.rate/100, c.rate/40
	nfft := 256
	if c.rate == 16000 {
		nfft = 512
	}
	// The plain DFT, from a table of cos and sin of 2πu/nfft.
	cosTab, sinTab := make([]float64, nfft), make([]float64, nfft)
	for u := range cosTab {
		cosTab[u] = math.Cos(2 * math.Pi * float64(u) / float64(nfft))
		sinTab[u] = math.Sin(2 * math.Pi * float64(u) / float64(nfft))
	}
	hops := len(pcm) / hop
	var statics [][]float64
	var voiced []bool
	for h := 2; h < hops; h++ {
		end := (h + 1) * hop
		frame := pcm[end-L : end]
		mean := 0.0
		for _, s := range frame {
			mean += float64(s)
		}
		mean /= float64(L)
		x := make([]float64, nfft)
		energy := 0.0
		for t := 0; t < L; t++ {
			v := float64(frame[t]) - mean
			energy += v * v
			// The sample before the frame is in the stream: end−L ≥ 40.
			prev := float64(pcm[end-L+t-1]) - mean
			w := 0.54 - 0.46*math.Cos(2*math.Pi*float64(t)/float64(L-1))
			x[t] = (v - 0.97*prev) * w
		}
		pow := make([]float64, nfft/2+1)
		for k := range pow {
			var re, im float64
			for t, v := range x[:L] {
				re += v * cosTab[k*t%nfft]
				im -= v * sinTab[k*t%nfft]
			}
			pow[k] = (re*re + im*im) / float64(L)
		}
		mel := func(f float64) float64 { return 1127 * math.Log(1+f/700) }
		ml, mh := mel(c.low), mel(c.high)
		logmel := make([]float64, c.nf)
		for i := range logmel {
			l := ml + (mh-ml)*float64(i)/float64(c.nf+1)
			m := ml + (mh-ml)*float64(i+1)/float64(c.nf+1)
			r := ml + (mh-ml)*float64(i+2)/float64(c.nf+1)
			s := 0.0
			for k, p := range pow {
				f := mel(float64(k) * float64(c.rate) / float64(nfft))
				w := math.Max(0, math.Min((f-l)/(m-l), (r-f)/(r-m)))
				s += w * p
			}
			logmel[i] = math.Log(math.Max(s, 0.01))
		}
		st := make([]float64, c.nc)
		st[0] = math.Log(math.Max(energy/float64(L), 0.01))
		for j := 1; j < c.nc; j++ {
			for i, v := range logmel {
				st[j] += math.Sqrt(2/float64(c.nf)) * v * math.Cos(math.Pi*float64(j)*(float64(i)+0.5)/float64(c.nf))
			}
		}
		statics = append(statics, st)
		voiced = append(voiced, voicedHops[h-1])
	}
	regress := func(seq [][]float64) [][]float64 {
		out := make([][]float64, len(seq))
		at := func(i int) []float64 { return seq[min(max(i, 0), len(seq)-1)] }
		for t := range seq {
			out[t] = make([]float64, c.nc)
			for i := range out[t] {
				for k := 1; k <= 2; k++ {
					out[t][i] += float64(k) * (at(t + k)[i] - at(t - k)[i])
				}
				out[t][i] /= 10
			}
		}
		return out
	}
	deltas := regress(statics)
	ddeltas := regress(deltas)
	var vecs [][]float64
	for t := range statics {
		if !voiced[t] {
			continue
		}
		v := append(append(append([]float64{}, statics[t]...), deltas[t]...), ddeltas[t]...)
		vecs = append(vecs, v)
	}
	if c.norm == NormOff {
		return vecs
	}
	nd := c.nc
	if c.variance {
		nd = 3 * c.nc
	}
	out := make([][]float64, len(vecs))
	for t, v := range vecs {
		out[t] = append([]float64{}, v...)
		from, to := max(0, t-c.window+1), t
		if c.norm == NormCentred {
			ahead := c.window / 2
			from, to = max(0, t-(c.window-1-ahead)), min(len(vecs)-1, t+ahead)
		}
		for i := 0; i < nd; i++ {
			// The extractor keeps the window in float32, like its output.
			mean, sq := 0.0, 0.0
			for u := from; u <= to; u++ {
				x := float64(float32(vecs[u][i]))
				mean += x
				sq += x * x
			}
			n := float64(to - from + 1)
			mean /= n
			out[t][i] = float64(float32(v[i])) - mean
			if c.variance {
				out[t][i] /= math.Sqrt(math.Max(sq/n-mean*mean, varFloor))
			}
		}
	}
	return out
}
