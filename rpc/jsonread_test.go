package rpc

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// TestReadingRule drives single lines through the server: field names match
// exactly and the last duplicate wins, for the envelope and for every
// command's fields alike.
func TestReadingRule(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, line string
		want       []string // the response frames, in order
	}{
		{"case-mangled field is not the field", `{"id":1,"type":"prompt","MeSsAgE":"hi"}`,
			[]string{`{"id":1,"type":"response","command":"prompt","success":false,"error":"Invalid prompt command: \"message\" must be a string"}`}},
		{"leading white space changes nothing", " \t" + `{"id":1,"type":"prompt","MeSsAgE":"hi"}`,
			[]string{`{"id":1,"type":"response","command":"prompt","success":false,"error":"Invalid prompt command: \"message\" must be a string"}`}},
		{"case-mangled type is not the type", `{"id":1,"Type":"get_state"}`,
			[]string{`{"type":"response","success":false,"error":"Unknown command: undefined"}`}},
		{"escaped key is the name it spells", `{"id":1,"typ\u0065":"get_last_assistant_text"}`,
			[]string{`{"id":1,"type":"response","command":"get_last_assistant_text","success":true,"data":{}}`}},
		{"duplicate type: last wins", `{"id":1,"type":"get_state","type":"get_last_assistant_text"}`,
			[]string{`{"id":1,"type":"response","command":"get_last_assistant_text","success":true,"data":{}}`}},
		{"duplicate type: last wins even when unknown", `{"id":1,"type":"get_state","type":"nope"}`,
			[]string{`{"type":"response","command":"nope","success":false,"error":"Unknown command: nope"}`}},
		{"duplicate id: last echoed, compacted", `{"id":"first","type":"get_last_assistant_text","id":{ "n" : [1, 2] }}`,
			[]string{`{"id":{"n":[1,2]},"type":"response","command":"get_last_assistant_text","success":true,"data":{}}`}},
		{"duplicate field: last wins over a bad first", `{"id":1,"type":"steer","message":3,"message":"hi"}`,
			[]string{`{"id":1,"type":"response","command":"steer","success":true}`}},
		{"duplicate field: last wins over a good first", `{"id":1,"type":"steer","message":"hi","message":3}`,
			[]string{`{"id":1,"type":"response","command":"steer","success":false,"error":"Invalid steer command: cannot unmarshal number into Go struct field promptArgs.message of type string"}`}},
		{"wrong type keeps its text", `{"id":1,"type":"follow_up","message":"x","images":{}}`,
			[]string{`{"id":1,"type":"response","command":"follow_up","success":false,"error":"Invalid follow_up command: cannot unmarshal object into Go struct field promptArgs.images of type []rpc.imageContent"}`}},
		{"string field: exact name", `{"id":1,"type":"set_steering_mode","MODE":"all"}`,
			[]string{`{"id":1,"type":"response","command":"set_steering_mode","success":false,"error":"Invalid set_steering_mode command: \"mode\" must be a string"}`}},
		{"string field: last wins", `{"id":1,"type":"set_steering_mode","mode":"bad","mode":"all"}`,
			[]string{`{"id":1,"type":"response","command":"set_steering_mode","success":true}`}},
		{"nested: case-mangled content", `{"type":"host_tool_result","id":"h","result":{"Content":[]}}`,
			[]string{`{"type":"response","command":"host_tool_result","success":false,"error":"Unknown command: host_tool_result"}`}},
		{"nested: last result wins (bad)", `{"type":"host_tool_result","id":"h","result":{"content":[]},"result":{"content":3}}`,
			[]string{`{"type":"response","command":"host_tool_result","success":false,"error":"Unknown command: host_tool_result"}`}},
		{"nested: last result wins (good)", `{"type":"host_tool_result","id":"h","result":{"content":3},"result":{"content":[]}}`, nil},
		{"nested: last content wins", `{"type":"host_tool_update","id":"h","partialResult":{"content":[],"content":null}}`,
			[]string{`{"type":"response","command":"host_tool_update","success":false,"error":"Unknown command: host_tool_update"}`}},
		{"U+2028 in the id is escaped", `{"id":"a` + "\u2028" + `b","type":"get_last_assistant_text"}`,
			[]string{`{"id":"a\u2028b","type":"response","command":"get_last_assistant_text","success":true,"data":{}}`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := serve(t, strings.NewReader(tc.line+"\n"), false, Options{})
			var got []string
			for _, frame := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if gjson.Get(frame, "type").Str == "response" {
					got = append(got, frame)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("%s\n got %q\nwant %q", tc.line, got, tc.want)
			}
		})
	}
}

// TestReadExactNested checks the rule inside nested objects of a decoded
// command (prompt images) and that readExact agrees with encoding/json
// where the rule and encoding/json agree: exact, unique names.
func TestReadExactNested(t *testing.T) {
	t.Parallel()
	msg := func(s string) *string { return &s }
	cases := []struct {
		line string
		want promptArgs
	}{
		{`{"message":"m","images":[{"type":"image","DATA":"x","data":"QUJD","data":"REVG","MimeType":"a","mimeType":"image/png"}]}`,
			promptArgs{Message: msg("m"), Images: []imageContent{{Type: "image", Data: "REVG", MimeType: "image/png"}}}},
		{`{"message":"m","images":[{"type":"image","data":"QUJD"}],"images":[],"Images":[{"data":"x"}]}`,
			promptArgs{Message: msg("m"), Images: []imageContent{}}},
		{`{"message":"m","streamingBehavior":"steer","StreamingBehavior":"followUp"}`,
			promptArgs{Message: msg("m"), StreamingBehavior: "steer"}},
		{`{"Message":"m","message":null}`, promptArgs{}},
	}
	for _, tc := range cases {
		var got promptArgs
		if err := readExact([]byte(tc.line), &got); err != nil {
			t.Errorf("%s: %v", tc.line, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.line, got, tc.want)
		}
	}
	for _, line := range []string{
		`{"message":"m","images":[{"type":"image","data":"QUJD","mimeType":"image/png"}],"other":{"x":[1]}}`,
		`{"message":"m","images":[{"type":1}]}`, `{"message":"m","images":"x"}`, `{"message":[1]}`,
		`{"message":"a\u00e9\n","images":null}`, `{}`,
	} {
		var a, b promptArgs
		errA, errB := readExact([]byte(line), &a), json.Unmarshal([]byte(line), &b)
		if !reflect.DeepEqual(a, b) || (errA == nil) != (errB == nil) || errA != nil && errA.Error() != errB.Error() {
			t.Errorf("%s: readExact %+v, %v; encoding/json %+v, %v", line, a, errA, b, errB)
		}
	}
}

// FuzzScanner pins the scanner of jsonread.go to gjson's reading of the
// same valid JSON (and valid UTF-8, as dispatch guarantees): the same
// members and elements, raw, in order.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{
		`{}`, ` { "a" : 1 , "b":[1,{"c":"\"}"}],"a":"x\\"}`, `[1, "two", {"k": [true, null]}, -1.5e3 ]`,
		`{"typ\u0065":"x","\\":"\\\\","":{}}`, `"s"`, `12`, `{"k":"\u2028é"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if !json.Valid([]byte(in)) || !utf8.ValidString(in) {
			return
		}
		var got, want []string
		members([]byte(in), func(key, keyRaw, val []byte) {
			var k string
			json.Unmarshal(keyRaw, &k)
			if k != string(key) {
				t.Fatalf("%s: key %q unquoted as %q", in, keyRaw, key)
			}
			got = append(got, string(keyRaw), string(val))
		})
		elements([]byte(in), func(val []byte) { got = append(got, string(val)) })
		root := gjson.Parse(in)
		if root.IsObject() || root.IsArray() {
			root.ForEach(func(k, v gjson.Result) bool {
				if root.IsObject() {
					want = append(want, k.Raw)
				}
				want = append(want, v.Raw)
				return true
			})
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s:\n got %q\nwant %q", in, got, want)
		}
	})
}

// FuzzReadExact checks readExact against the rule's reference reading
// (readRule, a map per object) for prompt arguments: the same values, and
// an error exactly when the reference finds a wrong type.
func FuzzReadExact(f *testing.F) {
	for _, s := range []string{
		`{"message":"m","images":[{"type":"image","DATA":"x","data":"QUJD","data":"REVG","mimeType":"image/png"}]}`,
		`{"message":3,"message":"m","Message":"x","images":null,"streamingBehavior":"steer"}`,
		`{"message":"m","images":[null,{"data":1}]}`, `{"images":{}}`, `{"message":"a","message":null}`,
		` {"MESSAGE":"m"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		m, ok := readRule([]byte(in))
		if !ok || !utf8.ValidString(in) {
			return
		}
		var want promptArgs
		wantErr := false
		str := func(raw json.RawMessage, dst *string) {
			if raw != nil && json.Unmarshal(raw, dst) != nil {
				wantErr = true
			}
		}
		if raw := m["message"]; raw != nil && string(raw) != "null" {
			want.Message = new(string)
			str(raw, want.Message)
		}
		str(m["streamingBehavior"], &want.StreamingBehavior)
		if raw := m["images"]; raw != nil && string(raw) != "null" {
			var list []json.RawMessage
			if json.Unmarshal(raw, &list) != nil {
				wantErr = true
			}
			want.Images = make([]imageContent, len(list))
			for i, e := range list {
				o, ok := readRule(e)
				if !ok && string(e) != "null" {
					wantErr = true
				}
				str(o["type"], &want.Images[i].Type)
				str(o["data"], &want.Images[i].Data)
				str(o["mimeType"], &want.Images[i].MimeType)
			}
		}
		var got promptArgs
		err := readExact([]byte(in), &got)
		if wantErr != (err != nil) {
			t.Fatalf("%s: error %v, reference says error %v", in, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\n got %+v\nwant %+v", in, got, want)
		}
	})
}
