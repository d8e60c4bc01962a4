package provider

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

// renderEvent gives a stream event a short form that shows every field a
// kind carries.
func renderEvent(ev engine.StreamEvent) string {
	switch ev.Kind {
	case engine.StreamTextStart:
		return "text_start"
	case engine.StreamTextDelta:
		return "text " + ev.Delta
	case engine.StreamTextEnd:
		if ev.Signature != "" {
			return "text_end sig=" + ev.Signature
		}
		return "text_end"
	case engine.StreamThinkingStart:
		return "thinking_start"
	case engine.StreamThinkingDelta:
		return "thinking " + ev.Delta
	case engine.StreamThinkingEnd:
		return "thinking_end sig=" + ev.Signature
	case engine.StreamToolCallStart:
		return "call_start " + ev.ToolCallID + " " + ev.ToolName
	case engine.StreamToolCallDelta:
		return "call_delta " + ev.ToolCallID + " " + ev.ToolName + " " + ev.Delta
	case engine.StreamToolCallEnd:
		if ev.Signature != "" {
			return "call_end " + ev.ToolCallID + " " + ev.ToolName + " args=" + string(ev.Arguments) + " sig=" + ev.Signature
		}
		return "call_end " + ev.ToolCallID + " " + ev.ToolName + " args=" + string(ev.Arguments)
	case engine.StreamRedactedThinking:
		return "redacted " + ev.Delta
	case engine.StreamUsage:
		return fmt.Sprintf("usage in=%d out=%d", ev.Usage.Input, ev.Usage.Output)
	case engine.StreamDone:
		return "done " + string(ev.StopReason) + " " + ev.ResponseID
	}
	return fmt.Sprintf("kind %d", ev.Kind)
}

func TestStreamWriter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		write func(w *StreamWriter) error
		want  []string
	}{
		{
			name: "text, Done closes it",
			write: func(w *StreamWriter) error {
				return errors.Join(w.Text("Hel"), w.Text("lo"), w.Done(engine.StopStop, "resp_1"))
			},
			want: []string{"text_start", "text Hel", "text lo", "text_end", "done stop resp_1"},
		},
		{
			name: "thinking then text: the thinking block ends first, with its signature",
			write: func(w *StreamWriter) error {
				err := w.Thinking("hmm")
				w.ThinkingSignature("sig")
				w.ThinkingSignature("-2")
				return errors.Join(err, w.Text("answer"), w.Done(engine.StopStop, ""))
			},
			want: []string{"thinking_start", "thinking hmm", "thinking_end sig=sig-2", "text_start", "text answer", "text_end", "done stop "},
		},
		{
			name: "text, thinking, text are three blocks",
			write: func(w *StreamWriter) error {
				return errors.Join(w.Text("a"), w.Thinking("b"), w.Text("c"), w.Done(engine.StopStop, ""))
			},
			want: []string{"text_start", "text a", "text_end", "thinking_start", "thinking b", "thinking_end sig=",
				"text_start", "text c", "text_end", "done stop "},
		},
		{
			name: "empty blocks: an empty delta only starts, once",
			write: func(w *StreamWriter) error {
				return errors.Join(w.Text(""), w.Text(""), w.EndText(), w.Thinking(""), w.EndThinking(), w.Done(engine.StopStop, ""))
			},
			want: []string{"text_start", "text_end", "thinking_start", "thinking_end sig=", "done stop "},
		},
		{
			name: "an end of another kind is a no-op",
			write: func(w *StreamWriter) error {
				return errors.Join(w.Text("a"), w.EndThinking(), w.ToolCallEnd([]byte(`{}`)), w.Text("b"), w.EndText(), w.EndText(), w.EndBlock())
			},
			want: []string{"text_start", "text a", "text b", "text_end"},
		},
		{
			name: "a signature outside a thinking block is dropped; a new block starts without one",
			write: func(w *StreamWriter) error {
				w.ThinkingSignature("lost")
				err := errors.Join(w.Thinking("x"), w.EndThinking())
				w.ThinkingSignature("lost too")
				return errors.Join(err, w.Thinking("y"), w.EndThinking())
			},
			want: []string{"thinking_start", "thinking x", "thinking_end sig=", "thinking_start", "thinking y", "thinking_end sig="},
		},
		{
			name: "a text block's signature rides on its end, once; one outside a text block is dropped",
			write: func(w *StreamWriter) error {
				w.TextSignature("lost")
				err := w.Text("a")
				w.TextSignature(`{"v":1,`)
				w.TextSignature(`"id":"msg_1"}`)
				err = errors.Join(err, w.Thinking("t"))
				w.TextSignature("lost too")
				err = errors.Join(err, w.Text("b"))
				w.TextSignature("msg_2")
				return errors.Join(err, w.EndText(), w.Text(""), w.Done(engine.StopStop, ""))
			},
			want: []string{"text_start", "text a", `text_end sig={"v":1,"id":"msg_1"}`, "thinking_start", "thinking t", "thinking_end sig=",
				"text_start", "text b", "text_end sig=msg_2", "text_start", "text_end", "done stop "},
		},
		{
			name: "a tool call's signature rides on its end; one outside a call is dropped, the next call starts without one",
			write: func(w *StreamWriter) error {
				w.ToolCallSignature("lost")
				err := w.ToolCallStart("call_a", "read")
				w.ToolCallSignature("wrong")
				w.ToolCallSignature("CiQB")
				err = errors.Join(err, w.ToolCallDelta(`{}`), w.ToolCallEnd([]byte(`{}`)))
				w.ToolCallSignature("lost too")
				return errors.Join(err, w.ToolCall("call_b", "ls", []byte(`{}`)))
			},
			want: []string{"call_start call_a read", "call_delta call_a read {}", "call_end call_a read args={} sig=CiQB",
				"call_start call_b ls", "call_delta call_b ls {}", "call_end call_b ls args={}"},
		},
		{
			name: "text then tool calls back to back",
			write: func(w *StreamWriter) error {
				return errors.Join(w.Text("Reading."),
					w.ToolCallStart("call_a", "read"), w.ToolCallDelta(`{"path":`), w.ToolCallDelta(`"a"}`),
					w.ToolCallStart("call_b", "grep"), w.ToolCallDelta(`{}`), w.ToolCallEnd([]byte(`{"x":1}`)),
					w.Done(engine.StopToolUse, ""))
			},
			want: []string{"text_start", "text Reading.", "text_end",
				"call_start call_a read", `call_delta call_a read {"path":`, `call_delta call_a read "a"}`, "call_end call_a read args=",
				"call_start call_b grep", "call_delta call_b grep {}", `call_end call_b grep args={"x":1}`,
				"done toolUse "},
		},
		{
			name: "a fragment without a call, or empty, emits nothing",
			write: func(w *StreamWriter) error {
				return errors.Join(w.ToolCallDelta(`{"lost":1}`), w.ToolCallStart("c", "ls"), w.ToolCallDelta(""), w.ToolCallEnd(nil), w.ToolCallDelta("late"))
			},
			want: []string{"call_start c ls", "call_end c ls args="},
		},
		{
			name: "text after a tool call ends the call",
			write: func(w *StreamWriter) error {
				return errors.Join(w.ToolCallStart("c", "ls"), w.ToolCallDelta("{"), w.Text("x"), w.ToolCallDelta("}"), w.Done(engine.StopStop, ""))
			},
			want: []string{"call_start c ls", "call_delta c ls {", "call_end c ls args=", "text_start", "text x", "text_end", "done stop "},
		},
		{
			name: "whole tool calls",
			write: func(w *StreamWriter) error {
				return errors.Join(w.Thinking("t"), w.ToolCall("call_0", "read", []byte(`{"p":1}`)), w.ToolCall("call_1", "ls", []byte(`{}`)), w.Done(engine.StopToolUse, ""))
			},
			want: []string{"thinking_start", "thinking t", "thinking_end sig=",
				"call_start call_0 read", `call_delta call_0 read {"p":1}`, `call_end call_0 read args={"p":1}`,
				"call_start call_1 ls", "call_delta call_1 ls {}", "call_end call_1 ls args={}", "done toolUse "},
		},
		{
			name: "redacted thinking ends the open block and opens none",
			write: func(w *StreamWriter) error {
				return errors.Join(w.Text("a"), w.RedactedThinking("opaque"), w.RedactedThinking("more"), w.Text("b"), w.Done(engine.StopStop, ""))
			},
			want: []string{"text_start", "text a", "text_end", "redacted opaque", "redacted more", "text_start", "text b", "text_end", "done stop "},
		},
		{
			name: "usage leaves the open block open",
			write: func(w *StreamWriter) error {
				return errors.Join(w.Usage(engine.Usage{Input: 1}), w.Text("a"), w.Usage(engine.Usage{Input: 1, Output: 2}), w.Text("b"), w.Done(engine.StopLength, ""))
			},
			want: []string{"usage in=1 out=0", "text_start", "text a", "usage in=1 out=2", "text b", "text_end", "done length "},
		},
		{
			name: "Done ends an open tool call; nothing follows Done",
			write: func(w *StreamWriter) error {
				return errors.Join(w.ToolCallStart("c", "ls"), w.ToolCallDelta("{}"), w.Done(engine.StopToolUse, "r"),
					w.Text("late"), w.Usage(engine.Usage{}), w.RedactedThinking("x"), w.Done(engine.StopStop, "again"))
			},
			want: []string{"call_start c ls", "call_delta c ls {}", "call_end c ls args=", "done toolUse r"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			w := NewStreamWriter(func(ev engine.StreamEvent) error {
				got = append(got, renderEvent(ev))
				return nil
			})
			if err := tt.write(w); err != nil {
				t.Fatalf("write: %v", err)
			}
			if g, want := strings.Join(got, "\n"), strings.Join(tt.want, "\n"); g != want {
				t.Errorf("events:\n%s\nwant:\n%s", g, want)
			}
			if w.Err() != nil {
				t.Errorf("Err() = %v", w.Err())
			}
		})
	}
}

// TestStreamWriterCallbackError: the callback's first error stops the
// stream; every later call returns it and emits nothing.
func TestStreamWriterCallbackError(t *testing.T) {
	t.Parallel()
	stop := errors.New("consumer gone")
	all := func(w *StreamWriter) []error {
		return []error{
			w.Text("a"), w.Thinking("b"), w.ToolCallStart("c", "ls"), w.ToolCallDelta("{}"),
			w.ToolCallEnd(nil), w.ToolCall("d", "ls", []byte("{}")), w.RedactedThinking("r"), w.Usage(engine.Usage{}),
			w.EndBlock(), w.Done(engine.StopStop, ""),
		}
	}
	// Count the events of a clean run, then fail at each of them in turn.
	var n int
	for _, err := range all(NewStreamWriter(func(engine.StreamEvent) error { n++; return nil })) {
		if err != nil {
			t.Fatal(err)
		}
	}
	for failAt := 1; failAt <= n; failAt++ {
		t.Run(fmt.Sprint("fail at event ", failAt), func(t *testing.T) {
			t.Parallel()
			calls := 0
			w := NewStreamWriter(func(engine.StreamEvent) error {
				calls++
				if calls == failAt {
					return stop
				}
				return nil
			})
			errs := all(w)
			if calls != failAt {
				t.Errorf("callback called %d times, want %d", calls, failAt)
			}
			if !errors.Is(w.Err(), stop) {
				t.Errorf("Err() = %v, want %v", w.Err(), stop)
			}
			if last := errs[len(errs)-1]; !errors.Is(last, stop) {
				t.Errorf("Done returned %v, want %v", last, stop)
			}
		})
	}
}

// BenchmarkStreamWriterText is the writer's cost per text delta, the
// adapters' hot path.
func BenchmarkStreamWriterText(b *testing.B) {
	w := NewStreamWriter(func(engine.StreamEvent) error { return nil })
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Text("tok "); err != nil {
			b.Fatal(err)
		}
	}
}
