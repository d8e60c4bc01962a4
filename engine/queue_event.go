package engine

// QueueUpdate is the family's queue_update event: the texts of the
// messages waiting in the steering and follow-up queues, sent whenever
// either changes (a message queued, taken into the run, or dropped by a
// session switch), so a host sees the queues without polling get_state.
type QueueUpdate struct {
	Steering, FollowUp []string
}

// EventType implements Event.
func (QueueUpdate) EventType() string { return "queue_update" }

// AppendJSON implements Event: {"type":"queue_update","steering":[…],
// "followUp":[…]} (empty arrays, never null).
func (e QueueUpdate) AppendJSON(dst []byte) []byte {
	dst = appendStrings(appendKey(appendType(dst, "queue_update"), "steering"), e.Steering)
	dst = appendStrings(appendKey(dst, "followUp"), e.FollowUp)
	return append(dst, '}')
}

func appendStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendJSONString(dst, s)
	}
	return append(dst, ']')
}

// queueChanged announces the queues as they now are. (actor)
func (s *Session) queueChanged() {
	texts := func(q []queued) []string {
		out := make([]string, 0, len(q))
		for _, m := range q {
			out = append(out, m.msg.Text())
		}
		return out
	}
	s.emit(QueueUpdate{Steering: texts(s.steering), FollowUp: texts(s.followUps)})
}

// enqueue adds msg to a queue and announces it. (actor)
func (s *Session) enqueue(q *[]queued, msg *UserMessage) {
	*q = append(*q, queued{msg})
	s.queueChanged()
}

// dequeue takes what a poll of the queue takes in mode (one, or all), and
// announces the change when it took anything. (actor)
func (s *Session) dequeue(q *[]queued, mode string) []Message {
	if len(*q) == 0 {
		return nil
	}
	n := 1
	if mode == ModeAll {
		n = len(*q)
	}
	out := make([]Message, n)
	for i := 0; i < n; i++ {
		out[i] = (*q)[i].msg
	}
	*q = append((*q)[:0:0], (*q)[n:]...)
	s.queueChanged()
	return out
}
