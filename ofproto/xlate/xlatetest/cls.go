package xlatetest

import (
	"gvs/ofproto/classifier"
	"gvs/ofproto/mf"
	"gvs/ofproto/xlate"
)

// UseClassifier makes b look its tables up with ofproto/classifier (as
// the ofproto core does) instead of the linear scan; call it after
// adding the rules. Ties in priority go to the classifier's choice.
func UseClassifier(b *Bridge) {
	var cls [255]*classifier.Classifier[*Rule]
	for t := range cls {
		c := classifier.New[*Rule]()
		for _, r := range b.Rules(uint8(t)) {
			c.Insert(&classifier.Rule[*Rule]{Match: r.M, Priority: int(r.Prio), Value: r}, 0)
		}
		cls[t] = c
	}
	b.Lookup = func(_ uint64, table uint8, f *mf.Flow, wc *mf.Wildcards) xlate.Rule {
		if r := cls[table].Lookup(0, f, wc); r != nil {
			return r.Value
		}
		return nil
	}
}
