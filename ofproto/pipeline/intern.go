package pipeline

import (
	"runtime"
	"slices"
	"sync"
	"unsafe"
	"weak"

	"gvs/ofproto/ofpact"
)

// actionIntern shares one copy of each distinct action list among the
// rules that have it (a controller's tables repeat a few lists across
// thousands of rules: the same next hop, the same classification). Lists
// are keyed by their OpenFlow 1.5 encoding and shared only when equal
// (sameActions: the key only finds candidates). The table holds its
// lists weakly: a list no rule uses any more is collected and its entry
// dropped by a cleanup. It is a separate object that references no rule,
// so that the cleanups do not keep the lists alive.
//
// Sharing is safe because a rule's actions are immutable once built
// (ofpact's Check, which records facts about the match in some actions,
// has run in the decoder, and such lists are not equal to others).
type actionIntern struct {
	mu  sync.Mutex
	buf []byte
	m   map[string]internedActions
}

// internVersion is the OpenFlow version of the keys (1.5: every action
// has an encoding).
const internVersion = 6

type internedActions struct {
	first weak.Pointer[Action] // the list's first element: its array
	n     int
}

func newActionIntern() *actionIntern {
	return &actionIntern{m: map[string]internedActions{}}
}

// share returns the shared copy of acts, making acts (copied into an array
// of its own) the shared copy if there is none. Any goroutine.
func (ai *actionIntern) share(acts []Action) []Action {
	if len(acts) == 0 {
		return acts
	}
	ai.mu.Lock()
	defer ai.mu.Unlock()
	ai.buf = ofpact.AppendActions(ai.buf[:0], acts, internVersion)
	if e, ok := ai.m[string(ai.buf)]; ok {
		if p := e.first.Value(); p != nil {
			if shared := unsafe.Slice(p, e.n); sameActions(shared, acts) {
				return shared
			}
			return acts // same encoding, different list: not shared
		}
	}
	own := slices.Clip(slices.Clone(acts))
	key := string(ai.buf)
	ai.m[key] = internedActions{first: weak.Make(&own[0]), n: len(own)}
	runtime.AddCleanup(&own[0], ai.forget, key)
	return own
}

// forget drops key's entry once its list is gone (a later list may have
// taken the key meanwhile).
func (ai *actionIntern) forget(key string) {
	ai.mu.Lock()
	defer ai.mu.Unlock()
	if e, ok := ai.m[key]; ok && e.first.Value() == nil {
		delete(ai.m, key)
	}
}

// len is how many lists the table holds (tests).
func (ai *actionIntern) len() int {
	ai.mu.Lock()
	defer ai.mu.Unlock()
	return len(ai.m)
}

// sameActions is actionsEqual, fast for the actions tables repeat most
// (comparable structs compared with ==); others go through reflection.
func sameActions(a, b []Action) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameAction(a[i], b[i]) {
			return false
		}
	}
	return true
}

func sameAction(a, b Action) bool {
	switch x := a.(type) {
	case *ofpact.Output:
		y, ok := b.(*ofpact.Output)
		return ok && *x == *y
	case *ofpact.SetField:
		y, ok := b.(*ofpact.SetField)
		return ok && *x == *y
	case *ofpact.Resubmit:
		y, ok := b.(*ofpact.Resubmit)
		return ok && *x == *y
	case *ofpact.GotoTable:
		y, ok := b.(*ofpact.GotoTable)
		return ok && *x == *y
	case *ofpact.WriteMetadata:
		y, ok := b.(*ofpact.WriteMetadata)
		return ok && *x == *y
	case *ofpact.Group:
		y, ok := b.(*ofpact.Group)
		return ok && *x == *y
	case *ofpact.Conjunction:
		y, ok := b.(*ofpact.Conjunction)
		return ok && *x == *y
	case *ofpact.DecTTL:
		y, ok := b.(*ofpact.DecTTL)
		return ok && x.Raw == y.Raw && slices.Equal(x.CntIDs, y.CntIDs) && (x.CntIDs == nil) == (y.CntIDs == nil)
	}
	return actionsEqual([]Action{a}, []Action{b})
}
