package engine

// The verbs that add to the session's record without a prompt: custom
// messages (an extension's sendMessage), custom entries (appendEntry) and
// labels (setLabel). Every front and the extension host call them the same
// way.

// The delivery modes of SendOptions.DeliverAs.
const (
	DeliverSteer    = "steer"
	DeliverFollowUp = "followUp"
	DeliverNextTurn = "nextTurn"
)

// SendOptions say how SendMessage delivers a custom message.
type SendOptions struct {
	// TriggerTurn starts a run with the message when the session is idle.
	TriggerTurn bool
	// DeliverAs: while a run is active the message is queued as a steering
	// message (DeliverSteer, the default) or a follow-up; DeliverNextTurn
	// keeps it for the next prompt, whatever the session is doing.
	DeliverAs string
}

// SendMessage delivers a custom message (the family's sendMessage):
// kept for the next prompt (DeliverNextTurn); queued while a run is
// active; when idle, the prompt of a new run (TriggerTurn) or recorded
// and announced at once (message_start, message_end), for the model to see
// with the next prompt. A run it starts needs a model, as a prompt does.
// (actor)
func (s *Session) SendMessage(m *CustomMessage, opts SendOptions) error {
	if m.Timestamp == 0 {
		m.Timestamp = s.now()
	}
	switch {
	case opts.DeliverAs == DeliverNextTurn:
		s.nextTurn = append(s.nextTurn, m)
	case !s.idle():
		if opts.DeliverAs == DeliverFollowUp {
			s.enqueue(&s.followUps, m)
		} else {
			s.enqueue(&s.steering, m)
		}
	case opts.TriggerTurn:
		if err := s.canRun(); err != nil {
			return err
		}
		s.output = nil
		s.startRun([]Message{m}, nil, nil, true, "")
	default:
		s.emit(MessageStart{Message: m})
		s.appendMessage(m)
		s.emit(MessageEnd{Message: m})
	}
	return nil
}

// canRun reports why a run cannot start now: no model, or no key for
// its provider. (actor)
func (s *Session) canRun() error {
	if s.set.model == nil {
		return ErrNoModel
	}
	if s.cfg.Models != nil && !s.cfg.Models.HasKey(*s.set.model) {
		e := &NoAPIKeyError{Provider: s.set.model.Provider}
		if h, ok := s.cfg.Models.(KeyHinter); ok {
			e.Hint = h.KeyHint(e.Provider)
		}
		return e
	}
	return nil
}

// AppendCustomEntry records an extension's state in the session (a custom
// entry: kept in the file, never sent to the model). data is raw JSON, or
// nil for none. (actor)
func (s *Session) AppendCustomEntry(customType string, data []byte) {
	s.appendEntry(&Entry{Type: EntryCustom, Custom: &CustomState{CustomType: customType, Data: data}})
}

// SetLabel puts a label on an entry of the record ("" clears it), as a
// label entry. An id that names no entry fails with ErrNoEntry. (actor)
func (s *Session) SetLabel(entryID, label string) error {
	if !s.rec.has(entryID) {
		return ErrNoEntry
	}
	s.appendEntry(&Entry{Type: EntryLabel, Label: &Label{TargetID: entryID, Text: label}})
	return nil
}
