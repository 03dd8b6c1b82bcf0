package packet

// Lender owns memory that a Buffer may borrow instead of its own: a
// device's receive ring, so that a frame is forwarded from where the
// kernel wrote it, with no copy in user space. Return is called once per
// loan, with the token given to Lend, when the buffer goes back to its
// pool (whichever goroutine puts it back); the memory must stay mapped
// until then.
type Lender interface {
	Return(token int)
}

// loan is a Buffer's borrowed backing.
type loan struct {
	own    []byte // the buffer's own memory, restored on Put
	lender Lender
	token  int
}

// Lend makes the buffer's frame the bytes mem[off:off+n], in place: mem
// before off is headroom (Prepend may write there), mem after off+n is
// tailroom. The buffer must be fresh from Get (no frame yet, no loan). Put
// gives the buffer its own memory back and calls l.Return(token). It
// panics on a bad range.
func (b *Buffer) Lend(mem []byte, off, n int, l Lender, token int) {
	if b.loan.lender != nil || off < 0 || n < 0 || off+n > len(mem) {
		panic("packet: bad Lend")
	}
	b.loan = loan{own: b.buf, lender: l, token: token}
	b.buf = mem
	b.off, b.end = off, off+n
}

// Borrowed reports whether the frame lives in a Lender's memory.
func (b *Buffer) Borrowed() bool { return b.loan.lender != nil }

// endLoan gives the buffer its own memory back and returns the loan to
// its lender. Called by Pool.Put.
func (b *Buffer) endLoan() {
	if l, tok := b.TakeLoan(); l != nil {
		l.Return(tok)
	}
}

// Loan returns the lender and token of a borrowed buffer, or nil and 0.
// With Headroom it locates the frame inside the lent memory: the frame
// starts Headroom() bytes into the mem given to Lend.
func (b *Buffer) Loan() (Lender, int) { return b.loan.lender, b.loan.token }

// TakeLoan ends the loan without returning it: the caller takes over the
// borrowed memory, and with it the duty to give it back to the lender (or
// to whatever the lender's own protocol says: a transmit ring that hands
// it back on completion, say). The buffer gets its own memory back, empty
// (its metadata is kept), so that Put frees it without calling Return. It
// returns what Loan returned before; nil and 0, and nothing changes, if
// the buffer was not borrowed. Read Data or Headroom first: afterwards
// they describe the buffer's own, empty memory.
func (b *Buffer) TakeLoan() (Lender, int) {
	l, tok := b.loan.lender, b.loan.token
	if l == nil {
		return nil, 0
	}
	b.buf = b.loan.own
	b.loan = loan{}
	b.off, b.end = b.headroom, b.headroom
	return l, tok
}
