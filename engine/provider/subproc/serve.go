package subproc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/xcsh-go/xcsh/engine"
)

// StreamFunc is the helper's adapter: one model call, with the key the
// agent's registry has for the model's provider ("" for none).
type StreamFunc func(ctx context.Context, req *engine.Request, apiKey string, fn func(engine.StreamEvent) error) error

// Serve answers the agent's calls read from in with stream, writing the
// replies to out, until in ends; then it cancels the calls still running,
// waits for them and returns. Each call runs on its own goroutine; out
// gets one whole line per write, under one lock.
func Serve(in io.Reader, out io.Writer, stream StreamFunc) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		wmu   sync.Mutex // one line per write to out
		mu    sync.Mutex // guards calls
		calls = map[int64]context.CancelFunc{}
		wg    sync.WaitGroup
	)
	write := func(f replyFrame) error {
		b, err := json.Marshal(f)
		if err != nil {
			b, _ = json.Marshal(replyFrame{ID: f.ID, Error: &wireError{Kind: engine.ErrorOther, Message: "subproc: " + err.Error()}})
		}
		wmu.Lock()
		defer wmu.Unlock()
		_, err = out.Write(append(b, '\n'))
		return err
	}
	r := bufio.NewReader(in)
	var readErr error
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var f callFrame
			if json.Unmarshal(line, &f) != nil {
				continue // not ours: nothing to answer
			}
			switch {
			case f.Cancel:
				mu.Lock()
				if c := calls[f.ID]; c != nil {
					c()
				}
				mu.Unlock()
			case f.Request != nil:
				callCtx, stop := context.WithCancel(ctx)
				mu.Lock()
				calls[f.ID] = stop
				mu.Unlock()
				wg.Add(1)
				go func(id int64, w *wireRequest, key string) {
					defer wg.Done()
					defer func() {
						mu.Lock()
						delete(calls, id)
						mu.Unlock()
						stop()
					}()
					write(serveCall(callCtx, id, w, key, stream, write))
				}(f.ID, f.Request, f.APIKey)
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				readErr = err
			}
			break
		}
	}
	cancel()
	wg.Wait()
	return readErr
}

// serveCall runs one call, writing its events, and returns its last line.
func serveCall(ctx context.Context, id int64, w *wireRequest, key string, stream StreamFunc, write func(replyFrame) error) replyFrame {
	req, err := w.decode()
	if err != nil {
		return replyFrame{ID: id, Error: &wireError{Kind: engine.ErrorOther, Message: err.Error()}}
	}
	err = stream(ctx, req, key, func(e engine.StreamEvent) error {
		return write(replyFrame{ID: id, Event: encodeEvent(e)})
	})
	switch {
	case ctx.Err() != nil:
		return replyFrame{ID: id, Error: &wireError{Kind: engine.ErrorOther, Message: ctx.Err().Error(), Canceled: true}}
	case err != nil:
		return replyFrame{ID: id, Error: encodeError(err)}
	}
	return replyFrame{ID: id, End: true}
}
