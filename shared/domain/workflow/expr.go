package workflow

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Conditions (a step's `if:`, a trigger's `filter:`) are evalexpr
// expressions in Buzz. This is the part of that language workflows use:
// literals (strings, integers, floats, true, false), variables (Vars),
// ( ), !, unary -, + - * / % on numbers (+ joins strings), == != < <= >
// >=, && ||, and the functions str_contains, str_starts_with,
// str_ends_with, str_len, len, str::to_lowercase, str::to_uppercase and
// str::trim. Anything else is a condition error, as an expression
// evalexpr cannot read is in Buzz.

// MaxExprBytes bounds an expression (Buzz's MAX_EXPR_LEN).
const MaxExprBytes = 4096

// maxDepth bounds nesting, so no expression can exhaust the stack.
const maxDepth = 64

// ConditionError is Buzz's "condition evaluation error: …".
type ConditionError struct{ Msg string }

func (e *ConditionError) Error() string { return "condition evaluation error: " + e.Msg }

// Eval evaluates expr against vars and wants a boolean.
func Eval(expr string, vars map[string]any) (bool, error) {
	if len(expr) > MaxExprBytes {
		return false, &ConditionError{fmt.Sprintf("condition expression exceeds %d byte limit", MaxExprBytes)}
	}
	p := &parser{src: expr, vars: vars}
	p.next()
	v, err := p.or(0)
	if err == nil && p.tok.kind != tEOF {
		err = fmt.Errorf("unexpected token %q", p.tok.text)
	}
	if err != nil {
		return false, &ConditionError{fmt.Sprintf("'%s': %v", expr, err)}
	}
	b, ok := v.(bool)
	if !ok {
		return false, &ConditionError{fmt.Sprintf("'%s': Expected a Boolean value, but got %s", expr, describe(v))}
	}
	return b, nil
}

type tokKind int

const (
	tEOF tokKind = iota
	tNum
	tStr
	tIdent
	tOp
	tErr
)

type token struct {
	kind tokKind
	text string
	num  any
}

type parser struct {
	src  string
	pos  int
	tok  token
	vars map[string]any
}

func (p *parser) next() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t' || p.src[p.pos] == '\n' || p.src[p.pos] == '\r') {
		p.pos++
	}
	if p.pos >= len(p.src) {
		p.tok = token{kind: tEOF}
		return
	}
	c := p.src[p.pos]
	start := p.pos
	switch {
	case c == '"':
		var b strings.Builder
		p.pos++
		for p.pos < len(p.src) && p.src[p.pos] != '"' {
			if p.src[p.pos] == '\\' && p.pos+1 < len(p.src) {
				p.pos++
				switch p.src[p.pos] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				default:
					b.WriteByte(p.src[p.pos])
				}
			} else {
				b.WriteByte(p.src[p.pos])
			}
			p.pos++
		}
		if p.pos >= len(p.src) {
			p.tok = token{kind: tErr, text: "unterminated string"}
			return
		}
		p.pos++
		p.tok = token{kind: tStr, text: b.String()}
	case c >= '0' && c <= '9':
		for p.pos < len(p.src) && (p.src[p.pos] >= '0' && p.src[p.pos] <= '9' || p.src[p.pos] == '.') {
			p.pos++
		}
		s := p.src[start:p.pos]
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			p.tok = token{kind: tNum, text: s, num: n}
		} else if f, err := strconv.ParseFloat(s, 64); err == nil {
			p.tok = token{kind: tNum, text: s, num: f}
		} else {
			p.tok = token{kind: tErr, text: "invalid number " + s}
		}
	case c == '_' || unicode.IsLetter(rune(c)):
		for p.pos < len(p.src) {
			d := p.src[p.pos]
			if d == '_' || d >= 'a' && d <= 'z' || d >= 'A' && d <= 'Z' || d >= '0' && d <= '9' {
				p.pos++
			} else if d == ':' && p.pos+1 < len(p.src) && p.src[p.pos+1] == ':' {
				p.pos += 2
			} else {
				break
			}
		}
		p.tok = token{kind: tIdent, text: p.src[start:p.pos]}
	default:
		for _, op := range []string{"&&", "||", "==", "!=", "<=", ">=", "<", ">", "!", "(", ")", ",", "+", "-", "*", "/", "%"} {
			if strings.HasPrefix(p.src[p.pos:], op) {
				p.pos += len(op)
				p.tok = token{kind: tOp, text: op}
				return
			}
		}
		p.tok = token{kind: tErr, text: fmt.Sprintf("unexpected character %q", c)}
	}
}

func (p *parser) is(op string) bool { return p.tok.kind == tOp && p.tok.text == op }

func (p *parser) or(d int) (any, error) {
	l, err := p.and(d)
	for err == nil && p.is("||") {
		p.next()
		var r any
		if r, err = p.and(d); err != nil {
			break
		}
		l, err = logic(l, r, true)
	}
	return l, err
}

func (p *parser) and(d int) (any, error) {
	l, err := p.cmp(d)
	for err == nil && p.is("&&") {
		p.next()
		var r any
		if r, err = p.cmp(d); err != nil {
			break
		}
		l, err = logic(l, r, false)
	}
	return l, err
}

func logic(l, r any, or bool) (any, error) {
	a, ok1 := l.(bool)
	b, ok2 := r.(bool)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("Expected a Boolean value, but got %s", describe(firstNonBool(l, r)))
	}
	if or {
		return a || b, nil
	}
	return a && b, nil
}

func firstNonBool(l, r any) any {
	if _, ok := l.(bool); !ok {
		return l
	}
	return r
}

func (p *parser) cmp(d int) (any, error) {
	l, err := p.add(d)
	if err != nil {
		return nil, err
	}
	for _, op := range []string{"==", "!=", "<=", ">=", "<", ">"} {
		if p.is(op) {
			p.next()
			r, err := p.add(d)
			if err != nil {
				return nil, err
			}
			return compare(op, l, r)
		}
	}
	return l, nil
}

func compare(op string, l, r any) (any, error) {
	if a, b, ok := numbers(l, r); ok {
		switch op {
		case "==":
			return a == b, nil
		case "!=":
			return a != b, nil
		case "<":
			return a < b, nil
		case "<=":
			return a <= b, nil
		case ">":
			return a > b, nil
		case ">=":
			return a >= b, nil
		}
	}
	switch op {
	case "==":
		return l == r, nil
	case "!=":
		return l != r, nil
	}
	a, ok1 := l.(string)
	b, ok2 := r.(string)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("Expected a Number value, but got %s", describe(l))
	}
	switch op {
	case "<":
		return a < b, nil
	case "<=":
		return a <= b, nil
	case ">":
		return a > b, nil
	}
	return a >= b, nil
}

func numbers(l, r any) (float64, float64, bool) {
	a, ok1 := num(l)
	b, ok2 := num(r)
	return a, b, ok1 && ok2
}

func num(v any) (float64, bool) {
	switch t := v.(type) {
	case int64:
		return float64(t), true
	case float64:
		return t, true
	}
	return 0, false
}

func (p *parser) add(d int) (any, error) {
	l, err := p.mul(d)
	for err == nil && (p.is("+") || p.is("-")) {
		op := p.tok.text
		p.next()
		var r any
		if r, err = p.mul(d); err != nil {
			break
		}
		if a, ok := l.(string); ok && op == "+" {
			b, ok := r.(string)
			if !ok {
				return nil, fmt.Errorf("Expected a String value, but got %s", describe(r))
			}
			l = a + b
			continue
		}
		l, err = arith(op, l, r)
	}
	return l, err
}

func (p *parser) mul(d int) (any, error) {
	l, err := p.unary(d)
	for err == nil && (p.is("*") || p.is("/") || p.is("%")) {
		op := p.tok.text
		p.next()
		var r any
		if r, err = p.unary(d); err != nil {
			break
		}
		l, err = arith(op, l, r)
	}
	return l, err
}

func arith(op string, l, r any) (any, error) {
	li, lInt := l.(int64)
	ri, rInt := r.(int64)
	if lInt && rInt {
		switch op {
		case "+":
			return li + ri, nil
		case "-":
			return li - ri, nil
		case "*":
			return li * ri, nil
		case "/", "%":
			if ri == 0 {
				return nil, fmt.Errorf("Division by zero")
			}
			if op == "/" {
				if li == -1<<63 && ri == -1 {
					return nil, fmt.Errorf("overflow")
				}
				return li / ri, nil
			}
			if ri == -1 {
				return int64(0), nil
			}
			return li % ri, nil
		}
	}
	a, b, ok := numbers(l, r)
	if !ok {
		return nil, fmt.Errorf("Expected a Number value, but got %s", describe(firstNonNum(l, r)))
	}
	switch op {
	case "+":
		return a + b, nil
	case "-":
		return a - b, nil
	case "*":
		return a * b, nil
	case "/":
		return a / b, nil
	}
	return nil, fmt.Errorf("Expected an Int value for %%")
}

func firstNonNum(l, r any) any {
	if _, ok := num(l); !ok {
		return l
	}
	return r
}

func (p *parser) unary(d int) (any, error) {
	if d > maxDepth {
		return nil, fmt.Errorf("expression nested too deeply")
	}
	if p.is("!") {
		p.next()
		v, err := p.unary(d + 1)
		if err != nil {
			return nil, err
		}
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("Expected a Boolean value, but got %s", describe(v))
		}
		return !b, nil
	}
	if p.is("-") {
		p.next()
		v, err := p.unary(d + 1)
		if err != nil {
			return nil, err
		}
		switch t := v.(type) {
		case int64:
			return -t, nil
		case float64:
			return -t, nil
		}
		return nil, fmt.Errorf("Expected a Number value, but got %s", describe(v))
	}
	return p.primary(d)
}

func (p *parser) primary(d int) (any, error) {
	t := p.tok
	switch t.kind {
	case tErr:
		return nil, fmt.Errorf("%s", t.text)
	case tEOF:
		return nil, fmt.Errorf("unexpected end of expression")
	case tNum:
		p.next()
		return t.num, nil
	case tStr:
		p.next()
		return t.text, nil
	case tIdent:
		p.next()
		switch t.text {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		if p.is("(") {
			p.next()
			var args []any
			for !p.is(")") {
				a, err := p.or(d + 1)
				if err != nil {
					return nil, err
				}
				args = append(args, a)
				if p.is(",") {
					p.next()
				} else if !p.is(")") {
					return nil, fmt.Errorf("expected , or ) in the call of %s", t.text)
				}
			}
			p.next()
			return call(t.text, args)
		}
		v, ok := p.vars[t.text]
		if !ok {
			return nil, fmt.Errorf("Variable identifier is not bound to anything by context: %q.", t.text)
		}
		return v, nil
	case tOp:
		if t.text == "(" {
			p.next()
			v, err := p.or(d + 1)
			if err != nil {
				return nil, err
			}
			if !p.is(")") {
				return nil, fmt.Errorf("missing )")
			}
			p.next()
			return v, nil
		}
	}
	return nil, fmt.Errorf("unexpected token %q", t.text)
}

func call(name string, args []any) (any, error) {
	strs := func(n int) ([]string, error) {
		if len(args) != n {
			return nil, fmt.Errorf("function %s takes %d arguments, got %d", name, n, len(args))
		}
		out := make([]string, n)
		for i, a := range args {
			s, ok := a.(string)
			if !ok {
				return nil, fmt.Errorf("Expected a String value, but got %s", describe(a))
			}
			out[i] = s
		}
		return out, nil
	}
	switch name {
	case "str_contains", "str_starts_with", "str_ends_with":
		s, err := strs(2)
		if err != nil {
			return nil, err
		}
		switch name {
		case "str_contains":
			return strings.Contains(s[0], s[1]), nil
		case "str_starts_with":
			return strings.HasPrefix(s[0], s[1]), nil
		}
		return strings.HasSuffix(s[0], s[1]), nil
	case "str_len", "len":
		s, err := strs(1)
		if err != nil {
			return nil, err
		}
		return int64(len(s[0])), nil
	case "str::to_lowercase", "str::to_uppercase", "str::trim":
		s, err := strs(1)
		if err != nil {
			return nil, err
		}
		switch name {
		case "str::to_lowercase":
			return strings.ToLower(s[0]), nil
		case "str::to_uppercase":
			return strings.ToUpper(s[0]), nil
		}
		return strings.TrimSpace(s[0]), nil
	}
	return nil, fmt.Errorf("Function identifier is not bound to anything by context: %q.", name)
}

func describe(v any) string {
	switch t := v.(type) {
	case nil:
		return "Empty"
	case string:
		return fmt.Sprintf("String(%q)", t)
	case int64:
		return fmt.Sprintf("Int(%d)", t)
	case float64:
		return fmt.Sprintf("Float(%v)", t)
	case bool:
		return fmt.Sprintf("Boolean(%v)", t)
	}
	return fmt.Sprintf("%v", v)
}
