package packet

// BatchSize is how many packets move through the datapath together: one
// receive call, one classifier pass, one send call.
const BatchSize = 32

// Batch is a fixed array of buffer pointers, owned by the caller (usually a
// PMD goroutine that keeps one or a few for its whole life), so batching
// never allocates. A Batch does not own the buffers it points to; the
// ownership rules are in the package documentation:
//
//   - After Recv(q, batch) returns, the caller owns the buffers appended.
//   - Send(q, batch) takes ownership of every buffer in the batch, even when
//     it returns an error (it frees what it could not send), and returns
//     with the batch empty. The caller must not touch those buffers again.
//   - A callee never keeps a pointer to the Batch itself after returning.
type Batch struct {
	bufs [BatchSize]*Buffer
	n    int
}

// Len returns the number of buffers in the batch.
func (b *Batch) Len() int { return b.n }

// Full reports whether Append would fail.
func (b *Batch) Full() bool { return b.n == BatchSize }

// Append adds buf at the end; it reports false if the batch is full.
func (b *Batch) Append(buf *Buffer) bool {
	if b.n == BatchSize {
		return false
	}
	b.bufs[b.n] = buf
	b.n++
	return true
}

// At returns the i-th buffer; it panics if i is out of range.
func (b *Batch) At(i int) *Buffer { return b.Buffers()[i] }

// Buffers returns the buffers as a slice aliasing the batch: valid until
// the batch changes.
func (b *Batch) Buffers() []*Buffer { return b.bufs[:b.n:b.n] }

// Reset empties the batch without freeing the buffers (their owner must
// have handed them on or put them back already). It clears the pointers
// so the batch does not keep stale buffers reachable.
func (b *Batch) Reset() {
	clear(b.bufs[:b.n])
	b.n = 0
}
