package engine

// The executor's plumbing: how work reaches the actor (Post, Call, later)
// and the two things nearly every file of the package needs from it, the
// Sink (emit) and the clock (now). It sits on the ground floor, beside
// serial.go, so the feature files that use it point down, not up into the
// verbs of session.go.

// Post runs fn on the actor: now, on the calling goroutine, when the actor
// is free, else after the functions posted before it. It blocks while the
// queue is full (backpressure). It must not be called from a function
// running on the executor (that would wait on itself once the queue is
// full; use later there); the tests check this.
func (s *Session) Post(fn func()) { s.exec.post(fn) }

// later queues fn to run on the actor after the current function and
// everything already queued, never blocking. (actor)
func (s *Session) later(fn func()) { s.exec.later(fn) }

// Call runs fn on the actor and waits for it. Same restriction as Post.
func (s *Session) Call(fn func()) {
	done := make(chan struct{})
	s.exec.post(func() { fn(); close(done) })
	<-done
}

// emit hands an event to the Sink. (actor)
func (s *Session) emit(ev Event) {
	if s.cfg.Sink != nil {
		s.cfg.Sink.Event(ev)
	}
}

// now is the session clock's time in milliseconds.
func (s *Session) now() int64 { return s.cfg.Clock.NowMillis() }
