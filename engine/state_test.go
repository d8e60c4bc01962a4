package engine

import (
	"encoding/json"
	"reflect"
	"testing"
)

// stateNilAsEmpty lists the State slices that appendState writes as [] when
// nil, where the json tags would write null: the wire never carries null
// there, and Session.State never returns them nil.
var stateNilAsEmpty = map[string]bool{"TodoPhases": true}

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

// fillValue sets v to a non-zero value of its type, recursively, so that
// every key of a nested struct is written. Strings carry characters the
// two encoders must escape alike.
func fillValue(t *testing.T, v reflect.Value, path string) {
	t.Helper()
	if v.Type() == rawMessageType {
		v.SetBytes([]byte(`{"type":"object","required":["a"]}`))
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.String:
		v.SetString(`x <&> "q" \ ` + "\u2028\n" + path)
	case reflect.Int, reflect.Int64:
		v.SetInt(42)
	case reflect.Float64:
		v.SetFloat(0.0036)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillValue(t, v.Elem(), path)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fillValue(t, v.Field(i), path+"."+v.Type().Field(i).Name)
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		fillValue(t, v.Index(0), path+"[0]")
		fillValue(t, v.Index(1), path+"[1]")
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fillValue(t, k, path+".key")
		fillValue(t, e, path+".value")
		v.SetMapIndex(k, e)
	default:
		t.Fatalf("%s: no sample for kind %s; teach fillValue", path, v.Kind())
	}
}

// fieldSamples gives the values a State field is set to in turn: its zero
// value, the empty form (empty string, empty non-nil slice, zero struct
// behind a pointer) and filled forms.
func fieldSamples(t *testing.T, f reflect.StructField) []reflect.Value {
	t.Helper()
	var out []reflect.Value
	add := func(set func(v reflect.Value)) {
		v := reflect.New(f.Type).Elem()
		set(v)
		out = append(out, v)
	}
	add(func(reflect.Value) {}) // zero
	switch f.Type.Kind() {
	case reflect.Bool, reflect.String:
		add(func(v reflect.Value) { fillValue(t, v, f.Name) })
	case reflect.Int:
		add(func(v reflect.Value) { v.SetInt(1) })
		add(func(v reflect.Value) { v.SetInt(-7) })
	case reflect.Pointer:
		add(func(v reflect.Value) { v.Set(reflect.New(f.Type.Elem())) })
		add(func(v reflect.Value) { fillValue(t, v, f.Name) })
	case reflect.Slice:
		add(func(v reflect.Value) { v.Set(reflect.MakeSlice(f.Type, 0, 0)) })
		add(func(v reflect.Value) {
			v.Set(reflect.MakeSlice(f.Type, 1, 1))
			v.Index(0).Set(reflect.New(f.Type.Elem()).Elem()) // a zero element
			if f.Type.Elem().Kind() == reflect.Struct {
				for i := 0; i < f.Type.Elem().NumField(); i++ {
					if ft := f.Type.Elem().Field(i).Type; ft == rawMessageType {
						v.Index(0).Field(i).SetBytes([]byte("{}")) // a zero RawMessage is not JSON
					}
				}
			}
		})
		add(func(v reflect.Value) { fillValue(t, v, f.Name) })
	default:
		t.Fatalf("State.%s: no samples for kind %s; teach fieldSamples", f.Name, f.Type.Kind())
	}
	return out
}

// F10: appendState is a second encoder of State next to its json tags. Set
// each field in turn, over an all-zero State and an all-filled one (so a
// field's omission is seen both first in the object and between others),
// and require the two encodings to be the same bytes.
func TestAppendStateMatchesJSONTags(t *testing.T) {
	t.Parallel()
	var full State
	fillValue(t, reflect.ValueOf(&full).Elem(), "State")
	typ := reflect.TypeOf(State{})
	cases := 0
	for _, base := range []struct {
		name string
		st   State
	}{{"zero", State{}}, {"full", full}} {
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			for j, sample := range fieldSamples(t, f) {
				st := base.st
				reflect.ValueOf(&st).Elem().Field(i).Set(sample)
				want := st
				for name := range stateNilAsEmpty {
					if fv := reflect.ValueOf(&want).Elem().FieldByName(name); fv.IsNil() {
						fv.Set(reflect.MakeSlice(fv.Type(), 0, 0))
					}
				}
				wantJSON, err := MarshalJSON(want)
				if err != nil {
					t.Fatal(err)
				}
				var c stateCache
				for pass, warm := range []string{"cold cache", "warm cache"} {
					got := appendState(nil, st, &c, 0)
					if string(got) != string(wantJSON) {
						t.Fatalf("%s state, %s sample %d, %s (pass %d):\n got %s\nwant %s", base.name, f.Name, j, warm, pass, got, wantJSON)
					}
				}
				cases++
			}
		}
	}
	if cases < 2*typ.NumField()*2 {
		t.Fatalf("only %d cases for %d fields", cases, typ.NumField())
	}
}

// The one deliberate difference from the json tags: nil todo phases are
// sent as [], never null.
func TestAppendStateNilTodoPhases(t *testing.T) {
	t.Parallel()
	var c stateCache
	got := appendState(nil, State{DumpTools: []ToolDump{}}, &c, 0)
	want := `{"isStreaming":false,"isCompacting":false,"steeringMode":"","followUpMode":"","interruptMode":"","sessionId":"","autoCompactionEnabled":false,"messageCount":0,"queuedMessageCount":0,"pendingMessageCount":0,"todoPhases":[],"systemPrompt":"","dumpTools":[]}`
	if string(got) != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}
