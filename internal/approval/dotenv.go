package approval

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// LoadDotEnv reads a .env file. A missing file is an empty map, not an error:
// a workspace without .env simply provides no keys.
//
// Accepted lines: KEY=VALUE, "export KEY=VALUE", blank lines and # comments.
// Unquoted values are trimmed and end at " #" (an inline comment).
// Double-quoted values may span lines and understand \n \r \t \" \\ and \$;
// single-quoted values are taken literally and may span lines. Values are
// not expanded (${X} stays as written). A later line for the same key wins.
// A line that is none of these is an error naming path and line, rather than
// a key silently missing.
func LoadDotEnv(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read .env: %w", err)
	}
	vars, err := parseDotEnv(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s:%w", path, err)
	}
	return vars, nil
}

type dotenvParser struct {
	s    string
	i    int
	line int
}

func parseDotEnv(s string) (map[string]string, error) {
	p := &dotenvParser{s: strings.TrimPrefix(s, "\uFEFF"), line: 1}
	vars := map[string]string{}
	for {
		p.skip(" \t\r\n")
		if p.eof() {
			return vars, nil
		}
		if p.peek() == '#' {
			p.skipLine()
			continue
		}
		key, value, err := p.assignment()
		if err != nil {
			return nil, err
		}
		vars[key] = value
	}
}

func (p *dotenvParser) assignment() (key, value string, err error) {
	start := p.line
	if rest := p.s[p.i:]; strings.HasPrefix(rest, "export") && len(rest) > 6 && (rest[6] == ' ' || rest[6] == '\t') {
		p.i += 6
		p.skip(" \t")
	}
	key = p.name()
	p.skip(" \t")
	if key == "" || p.eof() || p.peek() != '=' {
		return "", "", fmt.Errorf("%d: want KEY=VALUE with KEY made of letters, digits and _", start)
	}
	p.i++
	eq := p.i
	p.skip(" \t")
	switch {
	case p.eof():
		return key, "", nil
	case p.peek() == '"':
		value, err = p.doubleQuoted()
	case p.peek() == '\'':
		value, err = p.singleQuoted()
	default:
		return key, p.unquoted(p.i > eq), nil
	}
	if err != nil {
		return "", "", fmt.Errorf("%d: %s: %w", start, key, err)
	}
	if err := p.lineEnd(); err != nil {
		return "", "", fmt.Errorf("%d: %s: %w", p.line, key, err)
	}
	return key, value, nil
}

func (p *dotenvParser) name() string {
	start := p.i
	for !p.eof() && isNameByte(p.peek(), p.i == start) {
		p.i++
	}
	return p.s[start:p.i]
}

// unquoted reads to the end of the line. A '#' after a blank starts a comment;
// one right after '=' is part of the value ("KEY=#abc" is "#abc").
func (p *dotenvParser) unquoted(spaced bool) string {
	end := strings.IndexByte(p.s[p.i:], '\n')
	if end < 0 {
		end = len(p.s) - p.i
	}
	v := p.s[p.i : p.i+end]
	p.i += end
	for j := 0; j < len(v); j++ {
		if v[j] == '#' && ((j == 0 && spaced) || (j > 0 && (v[j-1] == ' ' || v[j-1] == '\t'))) {
			v = v[:j]
			break
		}
	}
	return strings.TrimRight(v, " \t\r")
}

func (p *dotenvParser) doubleQuoted() (string, error) {
	p.i++ // opening quote
	var b strings.Builder
	for !p.eof() {
		c := p.next()
		switch c {
		case '"':
			return b.String(), nil
		case '\\':
			if p.eof() {
				return "", errors.New("unterminated double-quoted value")
			}
			e := p.next()
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case '"', '\\', '$':
				b.WriteByte(e)
			default: // unknown escapes stay as written, as shells do
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", errors.New("unterminated double-quoted value")
}

func (p *dotenvParser) singleQuoted() (string, error) {
	p.i++ // opening quote
	end := strings.IndexByte(p.s[p.i:], '\'')
	if end < 0 {
		return "", errors.New("unterminated single-quoted value")
	}
	v := p.s[p.i : p.i+end]
	p.line += strings.Count(v, "\n")
	p.i += end + 1
	return v, nil
}

// lineEnd accepts only blanks and a comment after a closing quote.
func (p *dotenvParser) lineEnd() error {
	p.skip(" \t\r")
	if p.eof() || p.peek() == '\n' {
		return nil
	}
	if p.peek() == '#' {
		p.skipLine()
		return nil
	}
	return errors.New("unexpected text after the closing quote")
}

func (p *dotenvParser) eof() bool  { return p.i >= len(p.s) }
func (p *dotenvParser) peek() byte { return p.s[p.i] }

func (p *dotenvParser) next() byte {
	c := p.s[p.i]
	p.i++
	if c == '\n' {
		p.line++
	}
	return c
}

func (p *dotenvParser) skip(set string) {
	for !p.eof() && strings.IndexByte(set, p.peek()) >= 0 {
		p.next()
	}
}

func (p *dotenvParser) skipLine() {
	for !p.eof() && p.peek() != '\n' {
		p.i++
	}
}

func isNameByte(c byte, first bool) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9')
}
