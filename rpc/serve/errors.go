package serve

import "errors"

// The texts a client reads when the server refuses a command: each names
// the fix.

var errClosedSession = errors.New("the session is closed")

type notAttachedError struct{ id string }

func (e *notAttachedError) Error() string {
	return "Not attached to session " + e.id + ": attach first ({\"type\":\"attach\",\"sessionId\":\"" + e.id + "\"})"
}

type observerError struct{ id, typ string }

func (e *observerError) Error() string {
	return "Session " + e.id + ": this client is an observer and may only read (" + e.typ + " is refused); attach as a controller to drive it"
}

type recordError struct{ typ string }

func (e *recordError) Error() string {
	return e.typ + " is not available on a served session: its sessionId names one record (open_session starts another)"
}

type unknownSessionError struct{ id string }

func (e *unknownSessionError) Error() string {
	return "No session " + e.id + " (get_sessions lists them)"
}

// errorText is the wire text of an error.
func errorText(err error) string { return err.Error() }
