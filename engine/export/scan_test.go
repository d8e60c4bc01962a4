package export

import (
	"encoding/json"
	"fmt"
	"html"
	"strings"
)

// This file is a deliberately small HTML tokenizer for the tests: the
// module does not depend on golang.org/x/net/html, and the engine may only
// import the standard library. It follows the parts of the HTML tokenizer
// that decide whether markup is active: tags and their attributes (values
// entity-decoded, as a browser sees them), comments, and the raw-text
// elements whose content is not markup (script, style) or is text only
// (title, textarea).

// tag is one start or end tag of a page.
type tag struct {
	Name  string // lower case
	End   bool
	Attrs map[string]string // decoded values; nil on end tags
	// Body is the raw content of a script, style, title or textarea
	// element, carried on its start tag.
	Body string
}

// rawText are the elements whose content is not tokenized as markup.
var rawText = map[string]bool{"script": true, "style": true, "title": true, "textarea": true}

// scanTags returns the tags of s in order. It fails on an unterminated
// tag, comment or raw-text element.
func scanTags(s string) ([]tag, error) {
	var tags []tag
	for i := 0; i < len(s); {
		lt := strings.IndexByte(s[i:], '<')
		if lt < 0 {
			break
		}
		i += lt
		rest := s[i:]
		switch {
		case strings.HasPrefix(rest, "<!--"):
			end := strings.Index(rest[4:], "-->")
			if end < 0 {
				return nil, fmt.Errorf("unterminated comment at %d", i)
			}
			i += 4 + end + 3
		case strings.HasPrefix(rest, "<!"), strings.HasPrefix(rest, "<?"):
			end := strings.IndexByte(rest, '>')
			if end < 0 {
				return nil, fmt.Errorf("unterminated declaration at %d", i)
			}
			i += end + 1
		case strings.HasPrefix(rest, "</") && len(rest) > 2 && isLetter(rest[2]):
			end := strings.IndexByte(rest, '>')
			if end < 0 {
				return nil, fmt.Errorf("unterminated end tag at %d", i)
			}
			name := rest[2:]
			name = name[:nameLen(name)]
			tags = append(tags, tag{Name: strings.ToLower(name), End: true})
			i += end + 1
		case len(rest) > 1 && isLetter(rest[1]):
			t, n, err := scanStartTag(rest)
			if err != nil {
				return nil, fmt.Errorf("at %d: %w", i, err)
			}
			i += n
			if rawText[t.Name] {
				closing := "</" + t.Name
				end := strings.Index(strings.ToLower(s[i:]), closing)
				if end < 0 {
					return nil, fmt.Errorf("unterminated <%s> at %d", t.Name, i)
				}
				t.Body = s[i : i+end]
				i += end
			}
			tags = append(tags, t)
		default:
			i++ // a '<' that starts no tag is text
		}
	}
	return tags, nil
}

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// nameLen is the length of the tag or attribute name at the start of s.
func nameLen(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\r', '\f', '/', '>', '=':
			return i
		}
	}
	return len(s)
}

// scanStartTag reads the start tag at the beginning of s and returns it
// and its length.
func scanStartTag(s string) (tag, int, error) {
	n := nameLen(s[1:])
	t := tag{Name: strings.ToLower(s[1 : 1+n]), Attrs: map[string]string{}}
	i := 1 + n
	for {
		for i < len(s) && strings.IndexByte(" \t\n\r\f/", s[i]) >= 0 {
			i++
		}
		if i >= len(s) {
			return t, 0, fmt.Errorf("unterminated <%s>", t.Name)
		}
		if s[i] == '>' {
			return t, i + 1, nil
		}
		n := nameLen(s[i:])
		if n == 0 { // a stray '=' starts an attribute name in HTML
			n = 1
		}
		name := strings.ToLower(s[i : i+n])
		i += n
		for i < len(s) && strings.IndexByte(" \t\n\r\f", s[i]) >= 0 {
			i++
		}
		val := ""
		if i < len(s) && s[i] == '=' {
			i++
			for i < len(s) && strings.IndexByte(" \t\n\r\f", s[i]) >= 0 {
				i++
			}
			if i < len(s) && (s[i] == '"' || s[i] == '\'') {
				end := strings.IndexByte(s[i+1:], s[i])
				if end < 0 {
					return t, 0, fmt.Errorf("unterminated attribute %s", name)
				}
				val = s[i+1 : i+1+end]
				i += end + 2
			} else {
				j := i
				for j < len(s) && strings.IndexByte(" \t\n\r\f>", s[j]) < 0 {
					j++
				}
				val = s[i:j]
				i = j
			}
		}
		if _, dup := t.Attrs[name]; !dup { // the first wins, as in browsers
			t.Attrs[name] = html.UnescapeString(val)
		}
	}
}

// emitted are the elements the page template writes. Anything else in the
// output came from content.
var emitted = map[string]bool{
	"html": true, "head": true, "meta": true, "title": true, "style": true, "body": true,
	"header": true, "h1": true, "h2": true, "dl": true, "dt": true, "dd": true, "code": true,
	"nav": true, "main": true, "details": true, "summary": true, "pre": true, "section": true,
	"article": true, "span": true, "time": true, "div": true, "p": true, "img": true,
	"ol": true, "li": true, "a": true, "script": true,
}

var voidElements = map[string]bool{"meta": true, "img": true, "br": true, "hr": true, "link": true, "input": true}

// urlAttrs are attributes a browser loads or navigates to.
var urlAttrs = []string{"href", "src", "action", "formaction", "xlink:href", "data", "poster", "background", "srcset"}

// inertProblems lists every way the page s could run or load something we
// did not put there, or is not balanced markup. It is empty for a safe,
// well-formed page. script is the one executable script the page may hold;
// the other script elements must be JSON data blocks with no '<' in them.
func inertProblems(s, script string) []string {
	tags, err := scanTags(s)
	if err != nil {
		return []string{err.Error()}
	}
	var probs []string
	var stack []string
	for _, t := range tags {
		if !emitted[t.Name] {
			probs = append(probs, fmt.Sprintf("element <%s> the template never writes", t.Name))
		}
		if t.End {
			if len(stack) == 0 || stack[len(stack)-1] != t.Name {
				probs = append(probs, fmt.Sprintf("unbalanced </%s> (open: %v)", t.Name, stack))
				continue
			}
			stack = stack[:len(stack)-1]
			continue
		}
		if !voidElements[t.Name] {
			stack = append(stack, t.Name)
		}
		for name := range t.Attrs {
			if strings.HasPrefix(name, "on") {
				probs = append(probs, fmt.Sprintf("<%s> has event handler %s", t.Name, name))
			}
		}
		for _, name := range urlAttrs {
			v, ok := t.Attrs[name]
			if !ok {
				continue
			}
			if p := urlProblem(v); p != "" {
				probs = append(probs, fmt.Sprintf("<%s %s=%q>: %s", t.Name, name, v, p))
			}
		}
		if t.Name == "script" {
			switch {
			case t.Attrs["type"] == "application/json":
				if strings.Contains(t.Body, "<") || !json.Valid([]byte(t.Body)) {
					probs = append(probs, fmt.Sprintf("JSON data block is not plain JSON: %q", t.Body))
				}
			case t.Attrs["type"] != "" || t.Body != script:
				probs = append(probs, fmt.Sprintf("script we did not write: %q", t.Body))
			}
		}
	}
	if len(stack) > 0 {
		probs = append(probs, fmt.Sprintf("unclosed elements %v", stack))
	}
	return probs
}

// urlProblem says what is wrong with a URL attribute value, as a browser
// would read it: leading spaces and control characters dropped, tabs and
// newlines removed anywhere, the scheme case-insensitive.
func urlProblem(v string) string {
	v = strings.TrimLeft(v, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\v\f\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
	v = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(v)
	lv := strings.ToLower(v)
	switch {
	case strings.HasPrefix(lv, "javascript:"), strings.HasPrefix(lv, "vbscript:"):
		return "script URL"
	case strings.HasPrefix(lv, "data:"):
		for mime := range imageTypes {
			if strings.HasPrefix(v, "data:"+mime+";base64,") && isBase64(v[len("data:"+mime+";base64,"):]) {
				return ""
			}
		}
		return "data URL that is not an allowed image"
	case strings.HasPrefix(lv, "#"):
		return ""
	}
	return "URL that leaves the page"
}
