package eval_test

import (
	"fmt"

	"github.com/earshot-voice/earshot/eval"
)

// Frame scores of a VAD's decisions against ground-truth segments.
func ExampleConfusion() {
	truth := eval.AppendFrameLabels(nil, []eval.Segment{{Start: 0.02, End: 0.06}}, 8)
	decisions := []bool{false, false, false, true, true, true, true, false}
	var c eval.Confusion
	for i := range truth {
		c.Add(truth[i], decisions[i])
	}
	fmt.Printf("%+v P %.2f R %.2f F1 %.2f\n", c, c.Precision(), c.Recall(), c.F1())
	// Output: {TP:3 FP:1 FN:1 TN:3} P 0.75 R 0.75 F1 0.75
}

// The equal error rate of two score lists that overlap in one trial each.
func ExampleEER() {
	genuine := []float64{0.9, 0.8, 0.7, 0.4}
	impostor := []float64{0.1, 0.2, 0.3, 0.75}
	eer, threshold, err := eval.EER(genuine, impostor)
	fmt.Printf("EER %.3f at %.2f, %v\n", eer, threshold, err)
	// Output: EER 0.250 at 0.70, <nil>
}
