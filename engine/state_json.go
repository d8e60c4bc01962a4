package engine

import "strconv"

// appendState appends the get_state encoding of st, byte-identical to
// MarshalJSON(st) for every State that Session.State returns (a test
// compares the two field by field). c caches the encodings of the parts that
// rarely change, keyed by the settings version they were made from (0:
// no caching). It is a function of its arguments, not a Session method,
// so the test can drive it without a session. TodoPhases nil is written as
// [] (the original never sends null there); Session.State never returns it
// nil.
func appendState(dst []byte, st State, c *stateCache, version uint64) []byte {
	if version == 0 || c.version != version {
		c.version = version
		c.modelJSON, _ = MarshalJSON(st.Model)
		c.promptJSON = AppendJSONString(nil, st.SystemPrompt)
		c.toolsJSON, _ = MarshalJSON(st.DumpTools)
	}
	dst = append(dst, '{')
	if st.Model != nil {
		dst = append(append(dst, `"model":`...), c.modelJSON...)
		dst = append(dst, ',')
	}
	if st.ThinkingLevel != "" {
		dst = AppendJSONString(append(dst, `"thinkingLevel":`...), string(st.ThinkingLevel))
		dst = append(dst, ',')
	}
	dst = strconv.AppendBool(append(dst, `"isStreaming":`...), st.IsStreaming)
	dst = appendBoolField(dst, "isCompacting", st.IsCompacting)
	dst = appendStringField(dst, "steeringMode", st.SteeringMode)
	dst = appendStringField(dst, "followUpMode", st.FollowUpMode)
	dst = appendStringField(dst, "interruptMode", st.InterruptMode)
	if st.SessionFile != "" {
		dst = appendStringField(dst, "sessionFile", st.SessionFile)
	}
	dst = appendStringField(dst, "sessionId", st.SessionID)
	if st.SessionName != "" {
		dst = appendStringField(dst, "sessionName", st.SessionName)
	}
	dst = appendBoolField(dst, "autoCompactionEnabled", st.AutoCompactionEnabled)
	dst = appendIntField(dst, "messageCount", int64(st.MessageCount))
	dst = appendIntField(dst, "queuedMessageCount", int64(st.QueuedMessageCount))
	dst = appendIntField(dst, "pendingMessageCount", int64(st.PendingMessageCount))
	if len(st.TodoPhases) == 0 {
		dst = appendRawField(dst, "todoPhases", []byte("[]"))
	} else {
		todos, _ := MarshalJSON(st.TodoPhases)
		dst = appendRawField(dst, "todoPhases", todos)
	}
	dst = appendRawField(dst, "systemPrompt", c.promptJSON)
	dst = appendRawField(dst, "dumpTools", c.toolsJSON)
	if st.Sandbox != nil {
		sb, _ := MarshalJSON(st.Sandbox)
		dst = appendRawField(dst, "sandbox", sb)
	}
	if st.SessionSaveError != "" {
		dst = appendStringField(dst, "sessionSaveError", st.SessionSaveError)
	}
	if st.Budget != nil {
		dst = st.Budget.AppendJSON(appendKey(dst, "budget"))
	}
	return append(dst, '}')
}
