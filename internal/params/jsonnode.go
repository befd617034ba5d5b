package params

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// jsonNode parses a JSON document into the yaml.Node tree the Decoder reads, with the lines
// yaml.v3 gives (JSON is YAML; this scanner is an order of magnitude faster than yaml.v3 on the
// embedded configs every process reads at start-up). Strings are !!str scalars, numbers !!int or
// !!float, true/false !!bool, null !!null.
func jsonNode(data []byte) (*yaml.Node, error) {
	s := &jsonScanner{data: data, line: 1}
	n, err := s.value()
	if err != nil {
		return nil, err
	}
	s.space()
	if s.pos < len(s.data) {
		return nil, s.errorf("more than one JSON value")
	}
	return n, nil
}

type jsonScanner struct {
	data []byte
	pos  int
	line int
	// nodes and kids are where nodes and the lists of a container's children are cut from (a
	// few allocations per document, not one per node and per append); stack holds the children
	// of the containers being read.
	nodes []yaml.Node
	kids  []*yaml.Node
	stack []*yaml.Node
}

func (s *jsonScanner) errorf(format string, a ...any) error {
	return fmt.Errorf("line %d: %s", s.line, fmt.Sprintf(format, a...))
}

// space skips white space, counting lines.
func (s *jsonScanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case '\n':
			s.line++
		case '\r': // a line break alone, as YAML counts it; "\r\n" is one
			if s.pos+1 >= len(s.data) || s.data[s.pos+1] != '\n' {
				s.line++
			}
		case ' ', '\t':
		default:
			return
		}
		s.pos++
	}
}

func (s *jsonScanner) value() (*yaml.Node, error) {
	s.space()
	if s.pos >= len(s.data) {
		return nil, s.errorf("unexpected end of JSON")
	}
	line := s.line
	switch c := s.data[s.pos]; {
	case c == '{':
		s.pos++
		n := s.node(yaml.MappingNode, "!!map", "", line)
		s.space()
		if s.pos < len(s.data) && s.data[s.pos] == '}' {
			s.pos++
			return n, nil
		}
		base := len(s.stack)
		for {
			s.space()
			if s.pos >= len(s.data) || s.data[s.pos] != '"' {
				return nil, s.errorf("want a quoted key")
			}
			k, err := s.value()
			if err != nil {
				return nil, err
			}
			s.space()
			if s.pos >= len(s.data) || s.data[s.pos] != ':' {
				return nil, s.errorf("want ':' after key %s", strconv.Quote(k.Value))
			}
			s.pos++
			v, err := s.value()
			if err != nil {
				return nil, err
			}
			s.push(k)
			s.push(v)
			if done, err := s.next('}'); err != nil || done {
				s.close(n, base)
				return n, err
			}
		}
	case c == '[':
		s.pos++
		n := s.node(yaml.SequenceNode, "!!seq", "", line)
		s.space()
		if s.pos < len(s.data) && s.data[s.pos] == ']' {
			s.pos++
			return n, nil
		}
		base := len(s.stack)
		for {
			v, err := s.value()
			if err != nil {
				return nil, err
			}
			s.push(v)
			if done, err := s.next(']'); err != nil || done {
				s.close(n, base)
				return n, err
			}
		}
	case c == '"':
		v, err := s.str()
		if err != nil {
			return nil, err
		}
		return s.node(yaml.ScalarNode, "!!str", v, line), nil
	case c == '-' || c >= '0' && c <= '9':
		start := s.pos
		for s.pos < len(s.data) && strings.IndexByte("+-.eE0123456789", s.data[s.pos]) >= 0 {
			s.pos++
		}
		if !json.Valid(s.data[start:s.pos]) {
			return nil, s.errorf("invalid number %q", s.data[start:s.pos])
		}
		lit := string(s.data[start:s.pos])
		// yaml.v3's resolution: an integer past 64 bits is a float, a float past float64 a string.
		tag := "!!int"
		if strings.ContainsAny(lit, ".eE") || !fitsInt(lit) {
			tag = "!!float"
			if _, err := strconv.ParseFloat(lit, 64); err != nil {
				tag = "!!str"
			}
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: lit, Line: line}, nil
	default:
		for _, w := range [...]struct{ word, tag string }{{"true", "!!bool"}, {"false", "!!bool"}, {"null", "!!null"}} {
			if strings.HasPrefix(string(s.data[s.pos:min(len(s.data), s.pos+len(w.word))]), w.word) {
				s.pos += len(w.word)
				return s.node(yaml.ScalarNode, w.tag, w.word, line), nil
			}
		}
		return nil, s.errorf("invalid character %q", c)
	}
}

// node is a new node.
func (s *jsonScanner) node(kind yaml.Kind, tag, value string, line int) *yaml.Node {
	if len(s.nodes) == 0 { // about one node per 16 bytes left (a short document, a short slab)
		s.nodes = make([]yaml.Node, min(128, max(8, (len(s.data)-s.pos)/16)))
	}
	n := &s.nodes[0]
	s.nodes = s.nodes[1:]
	*n = yaml.Node{Kind: kind, Tag: tag, Value: value, Line: line}
	return n
}

// push adds a child of the container being read.
func (s *jsonScanner) push(n *yaml.Node) { s.stack = append(s.stack, n) }

// close gives container n the children pushed since the stack had length base.
func (s *jsonScanner) close(n *yaml.Node, base int) {
	k := len(s.stack) - base
	if k > len(s.kids) {
		s.kids = make([]*yaml.Node, max(k, min(1024, (len(s.data)-s.pos)/16)))
	}
	n.Content = s.kids[:k:k] // full: an append by a reader copies
	s.kids = s.kids[k:]
	copy(n.Content, s.stack[base:])
	s.stack = s.stack[:base]
}

// next consumes ',' (more to come) or the closing delimiter (done).
func (s *jsonScanner) next(closing byte) (bool, error) {
	s.space()
	if s.pos >= len(s.data) {
		return false, s.errorf("unexpected end of JSON: want ',' or '%c'", closing)
	}
	switch s.data[s.pos] {
	case ',':
		s.pos++
		return false, nil
	case closing:
		s.pos++
		return true, nil
	}
	return false, s.errorf("invalid character %q: want ',' or '%c'", s.data[s.pos], closing)
}

// str reads a quoted string; escapes are decoded by encoding/json.
func (s *jsonScanner) str() (string, error) {
	start := s.pos
	s.pos++ // the opening quote
	escaped := false
	for s.pos < len(s.data) {
		switch c := s.data[s.pos]; {
		case c == '\\':
			escaped = true
			s.pos += 2
			continue
		case c == '"':
			s.pos++
			if !escaped {
				return string(s.data[start+1 : s.pos-1]), nil
			}
			var v string
			if err := json.Unmarshal(s.data[start:s.pos], &v); err != nil {
				return "", s.errorf("invalid string: %v", err)
			}
			return v, nil
		case c == '\n' || c < 0x20:
			return "", s.errorf("invalid control character in string")
		}
		s.pos++
	}
	return "", s.errorf("unterminated string")
}

func fitsInt(lit string) bool {
	if _, err := strconv.ParseInt(lit, 10, 64); err == nil {
		return true
	}
	_, err := strconv.ParseUint(lit, 10, 64)
	return err == nil
}
