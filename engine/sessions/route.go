package sessions

// router holds requests for sessions that are being created: a client that
// pipes a prompt right behind its session/new must be served, in order.
// Its fields are guarded by the Manager's mu.
type router struct {
	// creating counts the sessions being created; deferred are the
	// requests waiting for them.
	creating int
	deferred []func()
	// draining is set while created routes the deferred requests: one
	// routed meanwhile waits behind them.
	draining bool
}

// Creating marks a session being created (a front's session/new, load or
// resume in flight); call done when it is created, or failed to be. Until
// then Route defers the requests for a session that does not exist yet,
// and every request after them.
func (m *Manager) Creating() (done func()) {
	m.mu.Lock()
	m.creating++
	m.mu.Unlock()
	return m.created
}

// Route hands fn the live session id (nil when there is none), now or,
// while a session is being created, once none is, in the order Route was
// called. Call it from the front's reader.
func (m *Manager) Route(id string, fn func(*Live)) {
	m.mu.Lock()
	l := m.live[id]
	if (l == nil && m.creating > 0) || len(m.deferred) > 0 || m.draining {
		m.deferred = append(m.deferred, func() { fn(m.Get(id)) })
		m.mu.Unlock()
		return
	}
	m.mu.Unlock()
	fn(l)
}

// created ends a creation: once none is in flight, the requests that
// waited are routed, in order, and so are those deferred meanwhile (a
// cancel read after a waiting prompt must not overtake it).
func (m *Manager) created() {
	m.mu.Lock()
	m.creating--
	if m.draining {
		m.mu.Unlock()
		return
	}
	m.draining = true
	for m.creating == 0 && len(m.deferred) > 0 {
		run := m.deferred
		m.deferred = nil
		m.mu.Unlock()
		for _, fn := range run {
			fn()
		}
		m.mu.Lock()
	}
	m.draining = false
	m.mu.Unlock()
}
